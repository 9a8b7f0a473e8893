import { GatewayError, type CommandErrorCode } from '../domain/errors.js';

/** Which value a TopicError is about. */
export type TopicField = 'prefix' | 'gatewayId' | 'deviceId' | 'discoveryPrefix' | 'topic';

/** A value that would change the shape of the gateway's topic tree (topics.ts says what is refused and why). */
export class TopicError extends GatewayError.of('topic') {
  constructor(
    readonly field: TopicField,
    readonly value: string,
    readonly reason: string,
  ) {
    // The value is quoted and cut short: it may be long or hold control characters.
    super(`${field} ${JSON.stringify(value.length > 80 ? `${value.slice(0, 80)}…` : value)} ${reason}`);
  }
}

/** A command from the cloud that is refused before it runs; `code` goes back in its result (commands.ts). */
export class CommandError extends GatewayError {
  constructor(
    override readonly code: CommandErrorCode,
    message: string,
    /** The command's id when the payload had a valid one, so the refusal can be matched to it. */
    readonly commandId: string | null = null,
  ) {
    super(message);
  }
}
