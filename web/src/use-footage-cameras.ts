import { useEffect, useState } from 'preact/hooks';
import { useApp } from './app.js';

// Which cameras keep continuous footage, for the screens that offer "show in timeline": asked once
// per screen; an account that may not see recordings, or a gateway that records only events,
// gets none (and no link that would lead nowhere).

export function useFootageCameras(): ReadonlySet<string> {
  const { api, scopes, epoch } = useApp();
  const [kept, setKept] = useState<ReadonlySet<string>>(new Set());
  const allowed = scopes.has('recordings:read');
  useEffect(() => {
    if (!allowed) return;
    api
      .footageStatus()
      .then((s) =>
        setKept(new Set(s.enabled ? s.cameras.filter((c) => c.profile !== null).map((c) => c.device_id) : [])),
      )
      .catch(() => setKept(new Set()));
  }, [api, allowed, epoch]);
  return kept;
}
