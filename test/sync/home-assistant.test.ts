import { describe, expect, it } from 'vitest';
import { effectiveSettings } from '../../src/domain/camera-settings.js';
import type { Device } from '../../src/domain/types.js';
import {
  cameraDeviceIdentifier,
  gatewayDeviceIdentifier,
  gatewaySensorUniqueId,
  homeAssistantConnectivityState,
  homeAssistantDetectionImage,
  homeAssistantDetectionImageDiscovery,
  homeAssistantDeviceDiscovery,
  homeAssistantDeviceRemoval,
  homeAssistantDeviceStates,
  homeAssistantEventState,
  homeAssistantGatewayDiscovery,
  homeAssistantStatusTopic,
  sensorUniqueId,
  type HaBinarySensorConfig,
  type HaImageConfig,
  type HomeAssistantContext,
} from '../../src/sync/home-assistant.js';
import { TopicError } from '../../src/sync/errors.js';

const ctx: HomeAssistantContext = { prefix: 'edge-gateway', gatewayId: 'gw_1', gatewayVersion: '0.1.0' };
const device: Device = {
  address: '192.168.1.20',
  source: 'onvif',
  rtspUrl: null,
  subRtspUrl: null,
  id: 'dev_abc',
  name: 'Front door',
  type: 'camera',
  status: 'online',
  model: 'DS-2CD2043',
  manufacturer: 'Hikvision',
  firmwareVersion: 'V5.7.3',
  lastSeenAt: 1_700_000_000_000,
  createdAt: 1_690_000_000_000,
  settings: effectiveSettings(null, null, { username: 'admin', hasPassword: true }, { recording: 'events' }),
  ptz: null,
};

const configs = (d: Device = device, c: HomeAssistantContext = ctx) =>
  homeAssistantDeviceDiscovery(c, d).map((m) => ({
    ...m,
    config: JSON.parse(String(m.payload)) as HaBinarySensorConfig,
  }));

describe('camera discovery', () => {
  const gatewayAvailability = {
    topic: 'edge-gateway/gw_1/status',
    payload_available: 'online',
    payload_not_available: 'offline',
  };
  const cameraAvailability = {
    topic: 'edge-gateway/gw_1/devices/dev_abc/state/connectivity',
    payload_available: 'ON',
    payload_not_available: 'OFF',
  };

  it('publishes four retained QoS 1 binary_sensor configs', () => {
    const msgs = configs();
    expect(msgs.map((m) => m.topic)).toEqual([
      'homeassistant/binary_sensor/4_gw_1_dev_abc_motion/config',
      'homeassistant/binary_sensor/4_gw_1_dev_abc_human/config',
      'homeassistant/binary_sensor/4_gw_1_dev_abc_vehicle/config',
      'homeassistant/binary_sensor/4_gw_1_dev_abc_connectivity/config',
    ]);
    expect(msgs.every((m) => m.retain && m.qos === 1)).toBe(true);
  });

  it.each([
    ['motion', 'Motion', 'motion', undefined],
    ['human', 'Person', 'occupancy', 'mdi:account'],
    ['vehicle', 'Vehicle', 'occupancy', 'mdi:car'],
  ] as const)('%s sensor', (kind, name, deviceClass, icon) => {
    const m = configs().find((x) => x.config.unique_id === `4_gw_1_dev_abc_${kind}`);
    expect(m?.config).toEqual({
      name,
      unique_id: `4_gw_1_dev_abc_${kind}`,
      device_class: deviceClass,
      state_topic: `edge-gateway/gw_1/devices/dev_abc/state/${kind}`,
      payload_on: 'ON',
      payload_off: 'OFF',
      qos: 1,
      ...(icon ? { icon } : {}),
      // Unavailable when the gateway is away or the camera is disconnected.
      availability: [gatewayAvailability, cameraAvailability],
      availability_mode: 'all',
      device: {
        identifiers: ['edge-gateway_4_gw_1_dev_abc'],
        name: 'Front door',
        manufacturer: 'Hikvision',
        model: 'DS-2CD2043',
        sw_version: 'V5.7.3',
        via_device: 'edge-gateway_4_gw_1',
      },
      origin: { name: 'edge-gateway', sw_version: '0.1.0' },
    });
  });

  it('connectivity sensor: diagnostic, available with the gateway only', () => {
    const m = configs().find((x) => x.config.device_class === 'connectivity');
    expect(m?.config).toMatchObject({
      name: 'Connectivity',
      unique_id: '4_gw_1_dev_abc_connectivity',
      state_topic: 'edge-gateway/gw_1/devices/dev_abc/state/connectivity',
      entity_category: 'diagnostic',
      availability: [gatewayAvailability],
    });
  });

  it('leaves unknown device details out rather than sending null', () => {
    const [m] = configs({ ...device, model: null, manufacturer: null, firmwareVersion: null });
    expect(m?.config.device).toEqual({
      identifiers: ['edge-gateway_4_gw_1_dev_abc'],
      name: 'Front door',
      via_device: 'edge-gateway_4_gw_1',
    });
    expect(m?.payload).not.toContain('null');
  });

  it('follows the topic prefix and a custom discovery prefix', () => {
    const [m] = configs(device, { ...ctx, prefix: 'acme/site', discoveryPrefix: 'ha' });
    expect(m?.topic).toBe('ha/binary_sensor/4_gw_1_dev_abc_motion/config');
    expect(m?.config.state_topic).toBe('acme/site/gw_1/devices/dev_abc/state/motion');
    expect(m?.config.availability?.[0]?.topic).toBe('acme/site/gw_1/status');
  });

  it('same input, same bytes (a re-publish is an update in place, not a new entity)', () => {
    expect(homeAssistantDeviceDiscovery(ctx, device)).toEqual(homeAssistantDeviceDiscovery(ctx, { ...device }));
  });

  it.each([
    [{ ...ctx, gatewayId: 'gw.1' }, device, 'gatewayId'],
    [{ ...ctx, gatewayId: 'gw/1' }, device, 'gatewayId'],
    [ctx, { ...device, id: 'dev 1' }, 'deviceId'],
    [ctx, { ...device, id: 'dev+' }, 'deviceId'],
    [{ ...ctx, prefix: 'a/#' }, device, 'prefix'],
    [{ ...ctx, discoveryPrefix: 'ha/+' }, device, 'discoveryPrefix'],
  ])('refuses ids Home Assistant or MQTT cannot take (%#)', (c, d, field) => {
    expect(() => homeAssistantDeviceDiscovery(c, d)).toThrow(TopicError);
    try {
      homeAssistantDeviceDiscovery(c, d);
    } catch (err) {
      expect((err as TopicError).field).toBe(field);
    }
  });
});

describe('unique ids and identifiers', () => {
  it('cannot collide across gateways whose ids share a prefix', () => {
    // Without the length, gateway "a" + device "b_c" and gateway "a_b" + device "c" would both be "a_b_c_motion".
    expect(sensorUniqueId('a', 'b_c', 'motion')).not.toBe(sensorUniqueId('a_b', 'c', 'motion'));
    expect(cameraDeviceIdentifier('a', 'b_c')).not.toBe(cameraDeviceIdentifier('a_b', 'c'));
    expect(gatewayDeviceIdentifier('a_b')).not.toBe(cameraDeviceIdentifier('a', 'b'));
    expect(gatewaySensorUniqueId('a_b')).not.toBe(sensorUniqueId('a', 'b', 'connectivity'));
    expect(gatewaySensorUniqueId('gw')).not.toBe(sensorUniqueId('gw', 'gateway', 'connectivity'));
  });

  it('are made only of the characters a discovery topic allows', () => {
    for (const id of [sensorUniqueId('gw_-X9', 'dev_-Y8', 'vehicle'), gatewaySensorUniqueId('gw_-X9')])
      expect(id).toMatch(/^[A-Za-z0-9_-]+$/);
  });
});

describe('gateway discovery', () => {
  it('is a connectivity sensor on the status topic', () => {
    const m = homeAssistantGatewayDiscovery(ctx);
    expect(m.topic).toBe('homeassistant/binary_sensor/4_gw_1_connectivity/config');
    expect(m.retain).toBe(true);
    expect(JSON.parse(String(m.payload))).toEqual({
      name: 'Connectivity',
      unique_id: '4_gw_1_connectivity',
      device_class: 'connectivity',
      state_topic: 'edge-gateway/gw_1/status',
      payload_on: 'online',
      payload_off: 'offline',
      qos: 1,
      entity_category: 'diagnostic',
      device: {
        identifiers: ['edge-gateway_4_gw_1'],
        name: 'Edge gateway gw_1',
        model: 'edge-gateway',
        sw_version: '0.1.0',
      },
      origin: { name: 'edge-gateway', sw_version: '0.1.0' },
    });
  });

  it('is the via_device of every camera', () => {
    const gateway = JSON.parse(String(homeAssistantGatewayDiscovery(ctx).payload)) as HaBinarySensorConfig;
    for (const m of configs()) expect(gateway.device.identifiers).toContain(m.config.device.via_device);
  });

  it("Home Assistant's birth topic", () => {
    expect(homeAssistantStatusTopic(ctx)).toBe('homeassistant/status');
    expect(homeAssistantStatusTopic({ discoveryPrefix: 'ha' })).toBe('ha/status');
  });
});

describe('states', () => {
  it.each([
    ['motion', true, 'edge-gateway/gw_1/devices/dev_abc/state/motion', 'ON'],
    ['human', false, 'edge-gateway/gw_1/devices/dev_abc/state/human', 'OFF'],
    ['vehicle', true, 'edge-gateway/gw_1/devices/dev_abc/state/vehicle', 'ON'],
  ] as const)('%s active=%s', (kind, active, topic, payload) => {
    expect(homeAssistantEventState(ctx, 'dev_abc', kind, active)).toEqual({ topic, payload, retain: true, qos: 1 });
  });

  it.each([
    ['online', 'ON'],
    ['offline', 'OFF'],
    ['unauthorized', 'OFF'],
  ] as const)('connectivity of a %s camera is %s', (status, payload) => {
    expect(homeAssistantConnectivityState(ctx, { id: 'dev_abc', status })).toEqual({
      topic: 'edge-gateway/gw_1/devices/dev_abc/state/connectivity',
      payload,
      retain: true,
      qos: 1,
    });
  });

  it('every state at once, connectivity first, events not open are OFF', () => {
    expect(
      homeAssistantDeviceStates(ctx, device, new Set(['human'])).map((m) => [m.topic.split('/').pop(), m.payload]),
    ).toEqual([
      ['connectivity', 'ON'],
      ['motion', 'OFF'],
      ['human', 'ON'],
      ['vehicle', 'OFF'],
    ]);
  });

  it('state topics are the ones the configs read', () => {
    const stateTopics = homeAssistantDeviceStates(ctx, device, new Set()).map((m) => m.topic);
    expect(
      configs()
        .map((m) => m.config.state_topic)
        .sort(),
    ).toEqual([...stateTopics].sort());
  });
});

describe('last-detection image', () => {
  it('is an image entity of the camera reading the JPEG topic, available with the gateway', () => {
    const m = homeAssistantDetectionImageDiscovery(ctx, device);
    expect(m.topic).toBe('homeassistant/image/4_gw_1_dev_abc_last_detection/config');
    expect(m.retain && m.qos === 1).toBe(true);
    const config = JSON.parse(String(m.payload)) as HaImageConfig;
    expect(config).toEqual({
      name: 'Last detection',
      unique_id: '4_gw_1_dev_abc_last_detection',
      image_topic: 'edge-gateway/gw_1/devices/dev_abc/image/detection',
      content_type: 'image/jpeg',
      icon: 'mdi:cctv',
      availability: [
        { topic: 'edge-gateway/gw_1/status', payload_available: 'online', payload_not_available: 'offline' },
      ],
      device: configs()[0]!.config.device,
      origin: { name: 'edge-gateway', sw_version: '0.1.0' },
    });
  });

  it('the picture goes raw and retained on the topic the entity reads', () => {
    const jpeg = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 1, 2, 3, 0xff, 0xd9]);
    const m = homeAssistantDetectionImage(ctx, 'dev_abc', jpeg);
    const config = JSON.parse(String(homeAssistantDetectionImageDiscovery(ctx, device).payload)) as HaImageConfig;
    expect(m).toEqual({ topic: config.image_topic, payload: jpeg, retain: true, qos: 1 });
  });

  it('its unique id cannot meet a sensor of another camera', () => {
    const ids = new Set(
      ['motion', 'human', 'vehicle', 'connectivity'].map((k) => sensorUniqueId('gw_1', 'dev_abc_last', k as 'motion')),
    );
    expect(
      ids.has(
        (JSON.parse(String(homeAssistantDetectionImageDiscovery(ctx, device).payload)) as HaImageConfig).unique_id,
      ),
    ).toBe(false);
  });

  it('refuses an id Home Assistant would not take', () => {
    expect(() => homeAssistantDetectionImageDiscovery(ctx, { ...device, id: 'dev/abc' })).toThrow(TopicError);
  });
});

describe('removal', () => {
  it('empties every config, state and image topic of the camera, retained', () => {
    const msgs = homeAssistantDeviceRemoval(ctx, 'dev_abc');
    expect(msgs.every((m) => m.payload === '' && m.retain && m.qos === 1)).toBe(true);
    const topics = msgs.map((m) => m.topic).sort();
    const image = homeAssistantDetectionImageDiscovery(ctx, device);
    const expected = [
      ...configs().map((m) => m.topic),
      ...homeAssistantDeviceStates(ctx, device, new Set()).map((m) => m.topic),
      image.topic,
      (JSON.parse(String(image.payload)) as HaImageConfig).image_topic,
    ].sort();
    expect(topics).toEqual(expected);
  });
});
