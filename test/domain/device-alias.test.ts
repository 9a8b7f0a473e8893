import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  aliasOf,
  deviceIdFrom,
  endpointOf,
  isDeviceAlias,
  stableEndpoint,
  type DeviceAlias,
} from '../../src/domain/device-alias.js';

const ID = /^dev_[A-Za-z0-9_-]{24}$/;
const UUID = 'urn:uuid:6f1c2e8a-2b7d-4c1e-9a55-0a1b2c3d4e5f';
const SERIAL = 'DS-2CD2043G0-I20190101';

// Ids are written to the store and sent to the cloud, so the hash they are made of is pinned here.
const sha = (key: string) =>
  `dev_${createHash('sha256').update(key, 'utf8').digest().subarray(0, 18).toString('base64url')}`;

describe('each alias kind: constructor → text → deviceIdFrom', () => {
  it.each<[string, DeviceAlias | null, string, string]>([
    ['endpoint, urn:uuid', aliasOf.endpoint(UUID), `epr:${UUID}`, `endpoint\u0000${UUID}`],
    [
      'endpoint, other URN',
      aliasOf.endpoint('URN:Example:Cam-1'),
      'epr:urn:example:Cam-1',
      'endpoint\u0000urn:example:Cam-1',
    ],
    ['serial', aliasOf.serial('Hikvision', SERIAL), `serial:Hikvision:${SERIAL}`, `serial\u0000${SERIAL}`],
    ['serial, no manufacturer', aliasOf.serial(null, SERIAL), `serial::${SERIAL}`, `serial\u0000${SERIAL}`],
    [
      'serial holding colons',
      aliasOf.serial('Acme', '00:11:22:33:44:55'),
      'serial:Acme:00:11:22:33:44:55',
      'serial\u000000:11:22:33:44:55',
    ],
    [
      'url',
      aliasOf.url('http://10.0.0.5/onvif/device_service'),
      'url:http://10.0.0.5/onvif/device_service',
      'address\u0000http://10.0.0.5/onvif/device_service',
    ],
  ])('%s', (_kind, alias, text, key) => {
    expect(alias).toBe(text);
    if (alias === null) return;
    expect(isDeviceAlias(alias)).toBe(true);
    const id = deviceIdFrom(alias);
    expect(id).toMatch(ID);
    expect(id).toBe(sha(key));
    expect(deviceIdFrom(alias)).toBe(id);
  });
});

describe('deviceIdFrom', () => {
  it('is the same however the UUID is written', () => {
    const id = deviceIdFrom(`epr:${UUID}`);
    for (const form of [
      'URN:UUID:6F1C2E8A-2B7D-4C1E-9A55-0A1B2C3D4E5F',
      'uuid:6f1c2e8a-2b7d-4c1e-9a55-0a1b2c3d4e5f',
      '6F1C2E8A-2B7D-4C1E-9A55-0A1B2C3D4E5F',
      ` ${UUID}\n`,
    ]) {
      const alias = aliasOf.endpoint(form);
      expect(alias).toBe(`epr:${UUID}`);
      if (alias) expect(deviceIdFrom(alias)).toBe(id);
    }
  });

  it('names the serial alone: the manufacturer and surrounding blanks do not change it', () => {
    const id = deviceIdFrom(`serial::${SERIAL}`);
    expect(deviceIdFrom(`serial:Hikvision:${SERIAL}`)).toBe(id);
    expect(deviceIdFrom(`serial:HIKVISION: ${SERIAL} `)).toBe(id);
  });

  it('differs between kinds and between values', () => {
    const aliases: DeviceAlias[] = [
      `epr:${UUID}`,
      'epr:urn:uuid:6f1c2e8a-2b7d-4c1e-9a55-0a1b2c3d4e60',
      'epr:urn:example:camera-7',
      'serial::urn:example:camera-7',
      'url:urn:example:camera-7',
      'serial::SN2',
    ];
    expect(new Set(aliases.map(deviceIdFrom)).size).toBe(aliases.length);
  });

  it('refuses what aliasOf would not make', () => {
    expect(() => deviceIdFrom('epr:http://192.168.1.20/onvif/device_service')).toThrow(RangeError);
    expect(() => deviceIdFrom('serial:Acme:  ')).toThrow(RangeError);
  });
});

describe('aliasOf', () => {
  it('makes no alias of what cannot identify a camera', () => {
    expect(aliasOf.endpoint('http://192.168.1.20/onvif/device_service')).toBeNull();
    expect(aliasOf.endpoint('urn:example:cam-192.168.1.20')).toBeNull();
    expect(aliasOf.endpoint('urn:uuid:not-a-uuid!')).toBeNull();
    expect(aliasOf.endpoint('  ')).toBeNull();
    expect(aliasOf.serial('Acme', null)).toBeNull();
    expect(aliasOf.serial('Acme', '  ')).toBeNull();
  });

  it('endpointOf reads back the endpoint of an epr: alias only', () => {
    expect(endpointOf(`epr:${UUID}`)).toBe(UUID);
    expect(endpointOf(`serial::${SERIAL}`)).toBeNull();
    expect(endpointOf('url:http://10.0.0.5/')).toBeNull();
  });

  it('isDeviceAlias tells the three kinds from other text', () => {
    for (const text of ['epr:x', 'serial::x', 'url:x']) expect(isDeviceAlias(text)).toBe(true);
    for (const text of ['serial:x', 'EPR:x', 'mac:00:11', '']) expect(isDeviceAlias(text)).toBe(false);
  });

  it('stableEndpoint refuses addresses and lower-cases the URN namespace only', () => {
    expect(stableEndpoint('http://192.168.1.20/')).toBeNull();
    expect(stableEndpoint('URN:Example:Cam-1')).toBe('urn:example:Cam-1');
  });
});
