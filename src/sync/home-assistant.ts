import { EVENT_TYPE_LABELS } from '../domain/event-labels.js';
import type { Device, EventType } from '../domain/types.js';
import { EVENT_TYPES } from '../domain/types.js';
import {
  deviceDetectionImageTopic,
  deviceStateTopic,
  statusTopic,
  validatePrefix,
  validateTopicBase,
  type DeviceStateKind,
} from './topics.js';
import { TopicError } from './errors.js';

// Home Assistant MQTT discovery (sync.mqtt.home_assistant: true), described in docs/mqtt.md. Pure:
// builds the messages; the publisher sends them. Each camera becomes a Home Assistant device with
// four binary sensors: motion, person and vehicle (from the camera's events) and connectivity. The
// gateway itself is one more device, with a connectivity sensor on its status topic, that the
// cameras name as `via_device` so Home Assistant shows which gateway they hang off.
//
// Discovery configs and states are published retained: Home Assistant (re)starting after the
// gateway reads them from the broker instead of showing `unknown` until the next change.

export const HA_DISCOVERY_PREFIX = 'homeassistant';
/** The payloads Home Assistant's binary sensors expect by default, spelled out in every config. */
export const HA_ON = 'ON';
export const HA_OFF = 'OFF';
/** The gateway's status payloads (`{prefix}/{gw}/status`), which double as Home Assistant availability. */
export const STATUS_ONLINE = 'online';
export const STATUS_OFFLINE = 'offline';

export interface HomeAssistantContext {
  /** sync.mqtt.topic_prefix */
  prefix: string;
  gatewayId: string;
  /** The gateway's version, for the `origin` block and the gateway device. */
  gatewayVersion: string;
  /** Home Assistant's discovery prefix (its own default `homeassistant`). */
  discoveryPrefix?: string;
}

/** A message to publish. QoS 1 like everything the gateway sends. */
export interface HaMessage {
  topic: string;
  /**
   * JSON text for configs, `ON`/`OFF` for states, JPEG bytes for an image, empty to delete a retained config or state.
   */
  payload: string | Buffer;
  retain: boolean;
  qos: 1;
}

/** One entry of `availability`: the entity is available only while every entry says so (mode `all`). */
export interface HaAvailability {
  topic: string;
  payload_available: string;
  payload_not_available: string;
}

export interface HaDevice {
  identifiers: string[];
  name: string;
  manufacturer?: string;
  model?: string;
  sw_version?: string;
  via_device?: string;
}

/** The fields of a binary_sensor discovery config the gateway uses (Home Assistant's names, unabbreviated). */
export interface HaBinarySensorConfig {
  name: string;
  unique_id: string;
  device_class: 'motion' | 'occupancy' | 'connectivity';
  state_topic: string;
  payload_on: string;
  payload_off: string;
  qos: 1;
  icon?: string;
  entity_category?: 'diagnostic';
  availability?: HaAvailability[];
  availability_mode?: 'all';
  device: HaDevice;
  origin: { name: string; sw_version: string };
}

/** An image entity (Home Assistant's MQTT `image` platform): raw JPEG bytes on `image_topic`. */
export interface HaImageConfig {
  name: string;
  unique_id: string;
  image_topic: string;
  content_type: 'image/jpeg';
  icon: string;
  availability: HaAvailability[];
  device: HaDevice;
  origin: { name: string; sw_version: string };
}

interface SensorSpec {
  name: string;
  deviceClass: HaBinarySensorConfig['device_class'];
  icon?: string;
}

// Person and vehicle are "occupancy": on while something is detected, which is what a camera's
// object event says; plain motion keeps Home Assistant's motion class.
const SENSORS: Record<DeviceStateKind, SensorSpec> = {
  motion: { name: EVENT_TYPE_LABELS.motion, deviceClass: 'motion' },
  human: { name: EVENT_TYPE_LABELS.human, deviceClass: 'occupancy', icon: 'mdi:account' },
  vehicle: { name: EVENT_TYPE_LABELS.vehicle, deviceClass: 'occupancy', icon: 'mdi:car' },
  connectivity: { name: 'Connectivity', deviceClass: 'connectivity' },
};

// Home Assistant allows only these characters in a discovery topic's object id; the gateway's
// ids are of this alphabet (ID_PATTERN and gateway.id), so this only catches a misuse.
const OBJECT_ID_RE = /^[A-Za-z0-9_-]+$/;

function checkObjectIdPart(value: string, field: 'gatewayId' | 'deviceId'): void {
  if (!OBJECT_ID_RE.test(value))
    throw new TopicError(field, value, 'must be letters, digits, "_" and "-" for Home Assistant discovery');
}

function discoveryPrefix(ctx: HomeAssistantContext): string {
  return ctx.discoveryPrefix ?? HA_DISCOVERY_PREFIX;
}

/** `{discovery}/status`: Home Assistant publishes `online` there when it starts; republish discovery then. */
export function homeAssistantStatusTopic(ctx: Pick<HomeAssistantContext, 'discoveryPrefix'>): string {
  return `${ctx.discoveryPrefix ?? HA_DISCOVERY_PREFIX}/status`;
}

/**
 * `{length of gw}_{gw}_{parts…}`: ids may themselves hold "_", so a plain join could give two
 * gateways' entities the same id (gateway `a` + device `b_c` against gateway `a_b` + device `c`);
 * the length fixes where the gateway id ends. Camera sensors are `…_{device}_{kind}`, the gateway's
 * own sensor `…_connectivity` (no further "_"), so those cannot meet either.
 */
function scoped(gatewayId: string, ...parts: string[]): string {
  return [String(gatewayId.length), gatewayId, ...parts].join('_');
}

/** The unique id (and discovery object id) of a camera's sensor, e.g. `11_gw_12345678_dev_abc_motion`. */
export function sensorUniqueId(gatewayId: string, deviceId: string, kind: DeviceStateKind): string {
  checkObjectIdPart(gatewayId, 'gatewayId');
  checkObjectIdPart(deviceId, 'deviceId');
  return scoped(gatewayId, deviceId, kind);
}

/** The unique id of the gateway's own connectivity sensor. */
export function gatewaySensorUniqueId(gatewayId: string): string {
  checkObjectIdPart(gatewayId, 'gatewayId');
  return scoped(gatewayId, 'connectivity');
}

/** The unique id of a camera's last-detection image (`…_{device}_last_detection`; no sensor kind is `last`). */
export function detectionImageUniqueId(gatewayId: string, deviceId: string): string {
  checkObjectIdPart(gatewayId, 'gatewayId');
  checkObjectIdPart(deviceId, 'deviceId');
  return scoped(gatewayId, deviceId, 'last_detection');
}

/** `{discovery}/{component}/{unique_id}/config` (no node id level: Home Assistant's advice when a unique_id is set). */
export function discoveryConfigTopic(
  ctx: HomeAssistantContext,
  uniqueId: string,
  component: 'binary_sensor' | 'image' = 'binary_sensor',
): string {
  return `${discoveryPrefix(ctx)}/${component}/${uniqueId}/config`;
}

/** Home Assistant device identifiers (`device.identifiers`, `via_device`), scoped like the unique ids. */
export const gatewayDeviceIdentifier = (gatewayId: string): string => `edge-gateway_${scoped(gatewayId)}`;
export const cameraDeviceIdentifier = (gatewayId: string, deviceId: string): string =>
  `edge-gateway_${scoped(gatewayId, deviceId)}`;
const origin = (ctx: HomeAssistantContext) => ({ name: 'edge-gateway', sw_version: ctx.gatewayVersion });

function gatewayAvailability(ctx: HomeAssistantContext): HaAvailability {
  return {
    topic: statusTopic(ctx.prefix, ctx.gatewayId),
    payload_available: STATUS_ONLINE,
    payload_not_available: STATUS_OFFLINE,
  };
}

const retained = (topic: string, payload: string | Buffer): HaMessage => ({ topic, payload, retain: true, qos: 1 });

function validateContext(ctx: HomeAssistantContext): void {
  validateTopicBase(ctx.prefix, ctx.gatewayId);
  checkObjectIdPart(ctx.gatewayId, 'gatewayId');
  validatePrefix(discoveryPrefix(ctx), 'discoveryPrefix');
}

/**
 * The gateway's own Home Assistant device: a connectivity sensor reading the status topic
 * (`online` = on). It has no availability of its own: when the gateway is away the sensor says so.
 */
export function homeAssistantGatewayDiscovery(ctx: HomeAssistantContext): HaMessage {
  validateContext(ctx);
  const uniqueId = gatewaySensorUniqueId(ctx.gatewayId);
  const config: HaBinarySensorConfig = {
    name: 'Connectivity',
    unique_id: uniqueId,
    device_class: 'connectivity',
    state_topic: statusTopic(ctx.prefix, ctx.gatewayId),
    payload_on: STATUS_ONLINE,
    payload_off: STATUS_OFFLINE,
    qos: 1,
    entity_category: 'diagnostic',
    device: {
      identifiers: [gatewayDeviceIdentifier(ctx.gatewayId)],
      name: `Edge gateway ${ctx.gatewayId}`,
      model: 'edge-gateway',
      sw_version: ctx.gatewayVersion,
    },
    origin: origin(ctx),
  };
  return retained(discoveryConfigTopic(ctx, uniqueId), JSON.stringify(config));
}

function cameraHaDevice(ctx: HomeAssistantContext, device: Device): HaDevice {
  return {
    identifiers: [cameraDeviceIdentifier(ctx.gatewayId, device.id)],
    name: device.name,
    // Home Assistant's schema takes strings here; an unknown value is left out rather than null.
    ...(device.manufacturer !== null ? { manufacturer: device.manufacturer } : {}),
    ...(device.model !== null ? { model: device.model } : {}),
    ...(device.firmwareVersion !== null ? { sw_version: device.firmwareVersion } : {}),
    via_device: gatewayDeviceIdentifier(ctx.gatewayId),
  };
}

/**
 * A camera's four discovery configs (motion, human, vehicle, connectivity), retained. Publish them
 * again when the device's name, model or firmware changes: Home Assistant updates in place.
 * Event sensors are available while the gateway is online and the camera connected (mode `all`);
 * the connectivity sensor needs only the gateway, so it can say the camera is off.
 */
export function homeAssistantDeviceDiscovery(ctx: HomeAssistantContext, device: Device): HaMessage[] {
  validateContext(ctx);
  checkObjectIdPart(device.id, 'deviceId');
  const haDevice = cameraHaDevice(ctx, device);
  const connectivityTopic = deviceStateTopic(ctx.prefix, ctx.gatewayId, device.id, 'connectivity');
  return (Object.keys(SENSORS) as DeviceStateKind[]).map((kind) => {
    const spec = SENSORS[kind];
    const uniqueId = sensorUniqueId(ctx.gatewayId, device.id, kind);
    const availability: HaAvailability[] =
      kind === 'connectivity'
        ? [gatewayAvailability(ctx)]
        : [
            gatewayAvailability(ctx),
            { topic: connectivityTopic, payload_available: HA_ON, payload_not_available: HA_OFF },
          ];
    const config: HaBinarySensorConfig = {
      name: spec.name,
      unique_id: uniqueId,
      device_class: spec.deviceClass,
      state_topic: deviceStateTopic(ctx.prefix, ctx.gatewayId, device.id, kind),
      payload_on: HA_ON,
      payload_off: HA_OFF,
      qos: 1,
      ...(spec.icon ? { icon: spec.icon } : {}),
      ...(kind === 'connectivity' ? { entity_category: 'diagnostic' as const } : {}),
      availability,
      availability_mode: 'all',
      device: haDevice,
      origin: origin(ctx),
    };
    return retained(discoveryConfigTopic(ctx, uniqueId), JSON.stringify(config));
  });
}

/**
 * A camera's "Last detection" image entity: the JPEG of the last person or vehicle found, box drawn,
 * retained so Home Assistant shows it after a restart. Available while the gateway is online (the
 * last picture stays meaningful when the camera is off).
 */
export function homeAssistantDetectionImageDiscovery(ctx: HomeAssistantContext, device: Device): HaMessage {
  validateContext(ctx);
  const uniqueId = detectionImageUniqueId(ctx.gatewayId, device.id);
  const config: HaImageConfig = {
    name: 'Last detection',
    unique_id: uniqueId,
    image_topic: deviceDetectionImageTopic(ctx.prefix, ctx.gatewayId, device.id),
    content_type: 'image/jpeg',
    icon: 'mdi:cctv',
    availability: [gatewayAvailability(ctx)],
    device: cameraHaDevice(ctx, device),
    origin: origin(ctx),
  };
  return retained(discoveryConfigTopic(ctx, uniqueId, 'image'), JSON.stringify(config));
}

/** The picture of a confirmed detection (JPEG bytes, retained: Home Assistant shows the last one). */
export function homeAssistantDetectionImage(ctx: HomeAssistantContext, deviceId: string, jpeg: Buffer): HaMessage {
  return retained(deviceDetectionImageTopic(ctx.prefix, ctx.gatewayId, deviceId), jpeg);
}

/**
 * Removes a camera from Home Assistant (the device was deleted): an empty retained payload on each
 * config topic deletes the entity, and on each state or image topic clears the broker's retained copy.
 */
export function homeAssistantDeviceRemoval(ctx: HomeAssistantContext, deviceId: string): HaMessage[] {
  validateContext(ctx);
  checkObjectIdPart(deviceId, 'deviceId');
  return [
    ...(Object.keys(SENSORS) as DeviceStateKind[]).flatMap((kind) => [
      retained(discoveryConfigTopic(ctx, sensorUniqueId(ctx.gatewayId, deviceId, kind)), ''),
      retained(deviceStateTopic(ctx.prefix, ctx.gatewayId, deviceId, kind), ''),
    ]),
    retained(discoveryConfigTopic(ctx, detectionImageUniqueId(ctx.gatewayId, deviceId), 'image'), ''),
    retained(deviceDetectionImageTopic(ctx.prefix, ctx.gatewayId, deviceId), ''),
  ];
}

/** A camera event started (`active`) or stopped: `ON`/`OFF` on its state topic, retained. */
export function homeAssistantEventState(
  ctx: HomeAssistantContext,
  deviceId: string,
  kind: EventType,
  active: boolean,
): HaMessage {
  return retained(deviceStateTopic(ctx.prefix, ctx.gatewayId, deviceId, kind), active ? HA_ON : HA_OFF);
}

/** Whether the camera is connected: `ON` only while its status is `online` (offline and unauthorized are `OFF`). */
export function homeAssistantConnectivityState(
  ctx: HomeAssistantContext,
  device: Pick<Device, 'id' | 'status'>,
): HaMessage {
  return retained(
    deviceStateTopic(ctx.prefix, ctx.gatewayId, device.id, 'connectivity'),
    device.status === 'online' ? HA_ON : HA_OFF,
  );
}

/**
 * Every state of a camera at once, connectivity first (the event sensors' availability reads it),
 * for (re)connects and Home Assistant restarts. `activeEvents` holds the kinds with an event open
 * now; the others are `OFF`, which also clears a state left `ON` by a gateway that stopped mid-event.
 */
export function homeAssistantDeviceStates(
  ctx: HomeAssistantContext,
  device: Pick<Device, 'id' | 'status'>,
  activeEvents: ReadonlySet<EventType>,
): HaMessage[] {
  return [
    homeAssistantConnectivityState(ctx, device),
    ...EVENT_TYPES.map((kind) => homeAssistantEventState(ctx, device.id, kind, activeEvents.has(kind))),
  ];
}
