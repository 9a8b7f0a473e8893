import { GatewayError, type FootageDiskProblem } from '../../domain/errors.js';

/**
 * Why the footage disk cannot be used (`code`): on the system disk (refused at start unless
 * allowed), or missing (not mounted, or unmounted since).
 */
export class FootageDiskError extends GatewayError {
  constructor(
    override readonly code: FootageDiskProblem,
    message: string,
  ) {
    super(message);
  }
}

/** A fragment table that cannot be encoded or read back (a size or duration out of range, a torn blob). */
export class FragmentTableError extends GatewayError.of('fragment_table') {}
