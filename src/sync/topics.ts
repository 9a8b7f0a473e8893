import { topicLevelProblem, topicPrefixProblem } from '../domain/topic-names.js';
import { EVENT_TYPES } from '../domain/types.js';
import { TopicError, type TopicField } from './errors.js';

// The gateway's MQTT topic tree (docs/mqtt.md). Pure: builds and parses topic names, nothing else.
//
//   {prefix}/{gateway_id}/status                              online | offline (retained, last will)
//   {prefix}/{gateway_id}/devices/{device_id}                 Device JSON (retained)
//   {prefix}/{gateway_id}/devices/{device_id}/control         commands in
//   {prefix}/{gateway_id}/devices/{device_id}/control/result  command results out
//   {prefix}/{gateway_id}/devices/{device_id}/state/{kind}    ON | OFF for Home Assistant (retained)
//   {prefix}/{gateway_id}/alerts                              Alert JSON
//   {prefix}/{gateway_id}/recordings                          Recording JSON
//
// The prefix may span several levels (`acme/site-1`); the gateway and device ids are one level
// each. Anything that would change the tree's shape is refused with a TopicError: a `/` inside an
// id adds a level, `+` and `#` are wildcards (a publish with them is a protocol error and closes the
// connection), an empty level or a leading `$` (broker-reserved, e.g. `$SYS`) would make topics
// that subscribers' wildcards do not match.

/** MQTT encodes a topic's length in two bytes. */
export const MAX_TOPIC_BYTES = 65_535;

/** What a device's state topics tell Home Assistant: its camera events and whether it is reachable. */
export const DEVICE_STATE_KINDS = [...EVENT_TYPES, 'connectivity'] as const;
export type DeviceStateKind = (typeof DEVICE_STATE_KINDS)[number];

/** Throws TopicError unless `prefix` can head the gateway's topics (one or more levels). */
export function validatePrefix(prefix: string, field: TopicField = 'prefix'): void {
  const problem = topicPrefixProblem(prefix);
  if (problem) throw new TopicError(field, prefix, problem);
}

/** Throws TopicError unless `value` can be one topic level (an id). */
export function validateLevel(value: string, field: TopicField): void {
  const problem = topicLevelProblem(value);
  if (problem) throw new TopicError(field, value, problem);
}

/**
 * Throws TopicError unless the prefix and gateway id make a valid base (the config's prefix alone is checked at load,
 * src/config/load.ts).
 */
export function validateTopicBase(prefix: string, gatewayId: string): void {
  validatePrefix(prefix);
  validateLevel(gatewayId, 'gatewayId');
}

function checkedLength(topic: string): string {
  // Cheap test first: a topic of at most a third of the limit in UTF-16 units fits in any encoding.
  if (topic.length > MAX_TOPIC_BYTES / 3 && Buffer.byteLength(topic, 'utf8') > MAX_TOPIC_BYTES) {
    throw new TopicError('topic', topic, `is longer than ${MAX_TOPIC_BYTES} bytes`);
  }
  return topic;
}

function base(prefix: string, gatewayId: string): string {
  validateTopicBase(prefix, gatewayId);
  return `${prefix}/${gatewayId}`;
}

function deviceBase(prefix: string, gatewayId: string, deviceId: string): string {
  const b = base(prefix, gatewayId);
  validateLevel(deviceId, 'deviceId');
  return `${b}/devices/${deviceId}`;
}

/** `{prefix}/{gw}/status`: retained `online`, and the last will `offline`. */
export function statusTopic(prefix: string, gatewayId: string): string {
  return checkedLength(`${base(prefix, gatewayId)}/status`);
}

/** `{prefix}/{gw}/devices/{id}`: the device's retained Device JSON. */
export function deviceTopic(prefix: string, gatewayId: string, deviceId: string): string {
  return checkedLength(deviceBase(prefix, gatewayId, deviceId));
}

/** `{prefix}/{gw}/alerts`: Alert JSON. */
export function alertsTopic(prefix: string, gatewayId: string): string {
  return checkedLength(`${base(prefix, gatewayId)}/alerts`);
}

/** `{prefix}/{gw}/recordings`: Recording JSON. */
export function recordingsTopic(prefix: string, gatewayId: string): string {
  return checkedLength(`${base(prefix, gatewayId)}/recordings`);
}

/** `{prefix}/{gw}/devices/{id}/control`: where the cloud sends commands for a device. */
export function controlTopic(prefix: string, gatewayId: string, deviceId: string): string {
  return checkedLength(`${deviceBase(prefix, gatewayId, deviceId)}/control`);
}

/** `{prefix}/{gw}/devices/{id}/control/result`: the gateway's answers to those commands. */
export function controlResultTopic(prefix: string, gatewayId: string, deviceId: string): string {
  return checkedLength(`${deviceBase(prefix, gatewayId, deviceId)}/control/result`);
}

/** `{prefix}/{gw}/devices/+/control`: the one subscription that receives every device's commands. */
export function controlSubscription(prefix: string, gatewayId: string): string {
  return checkedLength(`${base(prefix, gatewayId)}/devices/+/control`);
}

/** `{prefix}/{gw}/devices/{id}/state/{kind}`: retained `ON`/`OFF` for Home Assistant's binary sensors. */
export function deviceStateTopic(prefix: string, gatewayId: string, deviceId: string, kind: DeviceStateKind): string {
  return checkedLength(`${deviceBase(prefix, gatewayId, deviceId)}/state/${kind}`);
}

/**
 * `{prefix}/{gw}/devices/{id}/image/detection`: retained JPEG of the last person or vehicle the
 * detector found, its box drawn (Home Assistant's image entity reads it; Frigate publishes the same
 * kind of snapshot per camera).
 */
export function deviceDetectionImageTopic(prefix: string, gatewayId: string, deviceId: string): string {
  return checkedLength(`${deviceBase(prefix, gatewayId, deviceId)}/image/detection`);
}

const CONTROL_SUFFIX = '/control';

/**
 * The device id of a command topic (`{prefix}/{gw}/devices/{id}/control`), or null for any other
 * topic, including one whose id level is empty or could not be a level. The id is not checked
 * against the store: an unknown device is the caller's to answer. Throws TopicError only when the
 * prefix or gateway id themselves are invalid (a configuration error).
 */
export function parseControlTopic(prefix: string, gatewayId: string, topic: string): string | null {
  const head = `${base(prefix, gatewayId)}/devices/`;
  if (!topic.startsWith(head) || !topic.endsWith(CONTROL_SUFFIX)) return null;
  // Both tests passing on an overlapping string (`…/devices/control`) leaves end < start: no id.
  const start = head.length;
  const end = topic.length - CONTROL_SUFFIX.length;
  if (end <= start) return null;
  const deviceId = topic.slice(start, end);
  return topicLevelProblem(deviceId) === null ? deviceId : null;
}
