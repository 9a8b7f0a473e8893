import { describe, expect, it } from 'vitest';
import { envelope } from '../../../src/onvif/soap/envelope.js';
import { passwordDigest, usernameTokenXml } from '../../../src/onvif/soap/security.js';
import { parseSoapRequest } from '../../../src/onvif/simulator/request.js';
import { checkUsernameToken } from '../../../src/onvif/simulator/wsse.js';

// Our UsernameToken, read back by the simulated camera's side of the check (ONVIF Core §5.12).

const HOUR = 3600_000;

describe('usernameTokenXml', () => {
  it.each<[string, { username: string; password: string }, number, string, ReturnType<typeof checkUsernameToken>]>([
    ['the right account, clocks agree', { username: 'admin', password: 'pw' }, 0, 'pw', { ok: true }],
    ['dated by the camera clock (5 h ahead)', { username: 'admin', password: 'pw' }, 5 * HOUR, 'pw', { ok: true }],
    ['a wrong password', { username: 'admin', password: 'typo' }, 0, 'pw', { ok: false, reason: 'bad digest' }],
    [
      'markup and non-ASCII in the account',
      { username: 'a<d>&"min', password: 'pässwörd<&>' },
      0,
      'pässwörd<&>',
      { ok: true },
    ],
  ])('%s', async (_name, account, offsetMs, cameraPassword, result) => {
    const cameraNow = Date.now() + offsetMs;
    const request = await parseSoapRequest(
      envelope('<GetDeviceInformation xmlns="http://www.onvif.org/ver10/device/wsdl"/>', {
        security: usernameTokenXml(account, cameraNow),
      }),
    );
    expect(request?.operation).toBe('GetDeviceInformation');
    expect(request?.token?.username).toBe(account.username);
    expect(
      checkUsernameToken(request!.token, { username: account.username, password: cameraPassword }, cameraNow),
    ).toEqual(result);
  });

  it('a token dated by our clock is refused by a camera 5 h ahead (why the offset matters)', async () => {
    const request = await parseSoapRequest(
      envelope('<GetDeviceInformation/>', {
        security: usernameTokenXml({ username: 'admin', password: 'pw' }, Date.now()),
      }),
    );
    expect(checkUsernameToken(request!.token, { username: 'admin', password: 'pw' }, Date.now() + 5 * HOUR)).toEqual({
      ok: false,
      reason: 'clock skew',
    });
  });

  it('digests as the ONVIF core specification example', () => {
    // ONVIF Core spec §5.12.2.1 example values.
    expect(passwordDigest('LKqI6G/AikKCQrN0zqZFlg==', '2010-09-16T07:50:45Z', 'userpassword')).toBe(
      'tuOSpGlFlIXsozq4HFNeeGeFLEI=',
    );
  });
});

describe('envelope', () => {
  it('carries WS-Addressing for subscription calls, with the Axis subscription id echoed, escaped', async () => {
    const xml = envelope('<Renew xmlns="http://docs.oasis-open.org/wsn/b-2"/>', {
      addressing: { to: 'http://cam/sub?a=1&b=2', action: 'urn:renew', axisSubscriptionId: '<7>' },
    });
    expect(xml).toContain('<wsa:To s:mustUnderstand="1">http://cam/sub?a=1&#38;b=2</wsa:To>');
    expect(xml).toContain('<wsa:Action>urn:renew</wsa:Action>');
    expect(xml).toContain('wsa:IsReferenceParameter="true">&#60;7&#62;</SubscriptionId>');
    expect((await parseSoapRequest(xml))?.operation).toBe('Renew');
  });
});
