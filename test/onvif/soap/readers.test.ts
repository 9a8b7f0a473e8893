import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CameraFaultError, SoapFaultError, SoapXmlError } from '../../../src/onvif/errors.js';
import { isAuthFault } from '../../../src/onvif/soap/client.js';
import {
  readCapabilities,
  readDeviceInformation,
  readServices,
  readSystemDateAndTime,
} from '../../../src/onvif/soap/device-ops.js';
import { readRenew, readSubscription } from '../../../src/onvif/soap/event-ops.js';
import { readMediaUri, readProfiles } from '../../../src/onvif/soap/media-ops.js';
import { parseSoapBody } from '../../../src/onvif/soap-xml.js';
import * as R from '../../../src/onvif/simulator/responses.js';

// Each operation's reader over the answers it can get: proper ones (simulator, real captures),
// partial ones (values null), and answers to something else (a fault of that call).

const CAPTURES = path.resolve(import.meta.dirname, '../../../../shared/onvif-captures');
const capture = (p: string) => {
  if (existsSync(path.join(CAPTURES, p))) return readFileSync(path.join(CAPTURES, p), 'utf8');
  console.log(`skipping the test of ${p}: ${CAPTURES} is absent (the shared captures live outside the repository)`);
  return null;
};
const body = (xml: string) => parseSoapBody(xml);
const at = Date.UTC(2026, 10, 25, 9, 8, 7);

describe('device management readers', () => {
  it.each<[string, string, (b: Record<string, unknown>) => unknown, unknown]>([
    ['clock', R.systemDateAndTime(at), readSystemDateAndTime, at],
    [
      'clock without UTCDateTime (local time only)',
      R.envelope(
        '<tds:GetSystemDateAndTimeResponse><tds:SystemDateAndTime><tt:DateTimeType>NTP</tt:DateTimeType></tds:SystemDateAndTime></tds:GetSystemDateAndTimeResponse>',
      ),
      readSystemDateAndTime,
      null,
    ],
    [
      'clock with month 13',
      R.systemDateAndTime(at).replace(/<tt:Month>\d+</, '<tt:Month>13<'),
      readSystemDateAndTime,
      null,
    ],
    [
      'device information',
      R.deviceInformation({ manufacturer: 'A&B', model: 'M', firmware: 'F', serial: 'S', hardwareId: 'H' }),
      readDeviceInformation,
      { manufacturer: 'A&B', model: 'M', firmwareVersion: 'F', serialNumber: 'S', hardwareId: 'H' },
    ],
    [
      'device information, empty fields',
      R.envelope('<tds:GetDeviceInformationResponse><tds:Model> </tds:Model></tds:GetDeviceInformationResponse>'),
      readDeviceInformation,
      { manufacturer: null, model: null, firmwareVersion: null, serialNumber: null, hardwareId: null },
    ],
    [
      'services',
      R.services('http://10.0.0.9'),
      readServices,
      {
        media1: 'http://10.0.0.9/onvif/media_service',
        media2: null,
        events: 'http://10.0.0.9/onvif/event_service',
        ptz: null,
      },
    ],
    [
      'capabilities',
      R.capabilities('http://10.0.0.9'),
      readCapabilities,
      {
        media1: 'http://10.0.0.9/onvif/media_service',
        media2: null,
        events: 'http://10.0.0.9/onvif/event_service',
        ptz: null,
      },
    ],
  ])('%s', async (_name, xml, read, expected) => {
    expect(read(await body(xml))).toEqual(expected);
  });

  it.each<[string, (b: Record<string, unknown>) => unknown]>([
    ['clock', readSystemDateAndTime],
    ['device information', readDeviceInformation],
    ['services', readServices],
    ['capabilities', readCapabilities],
    ['subscription', readSubscription],
    ['profiles', (b) => readProfiles(b, 'media1')],
    ['stream URI', (b) => readMediaUri(b, 'GetStreamUri')],
  ])('%s: an answer to another operation is a fault of this call', async (_name, read) => {
    expect(() => read({ somethingElseResponse: [''] })).toThrow(CameraFaultError);
  });
});

describe('media readers', () => {
  it('reads Media1 profiles with their encoder, and skips profiles without a token', async () => {
    const xml = R.profiles([{ token: 'P1', name: 'main', width: 1920, height: 1080 }]).replace(
      '</trt:GetProfilesResponse>',
      '<trt:Profiles><tt:Name>tokenless</tt:Name></trt:Profiles></trt:GetProfilesResponse>',
    );
    expect(readProfiles(await body(xml), 'media1')).toEqual([
      { token: 'P1', name: 'main', width: 1920, height: 1080, encoding: 'H264', ptz: null },
    ]);
  });

  it('reads Media2 profiles (Configurations/VideoEncoder)', async () => {
    const xml = R.envelope(
      '<tr2:GetProfilesResponse xmlns:tr2="http://www.onvif.org/ver20/media/wsdl"><tr2:Profiles token="m" fixed="true"><tr2:Name>Main</tr2:Name><tr2:Configurations>' +
        '<tr2:VideoEncoder token="ve"><tt:Name>v</tt:Name><tt:Encoding>H265</tt:Encoding><tt:Resolution><tt:Width>3840</tt:Width><tt:Height>2160</tt:Height></tt:Resolution></tr2:VideoEncoder>' +
        '</tr2:Configurations></tr2:Profiles></tr2:GetProfilesResponse>',
    );
    expect(readProfiles(await body(xml), 'media2')).toEqual([
      { token: 'm', name: 'Main', width: 3840, height: 2160, encoding: 'H265', ptz: null },
    ]);
  });

  it('reads Media1 and Media2 URIs, and a missing one as null', async () => {
    expect(readMediaUri(await body(R.streamUri('rtsp://cam/a?x=1&y=2')), 'GetStreamUri')).toBe('rtsp://cam/a?x=1&y=2');
    expect(
      readMediaUri(
        await body(
          R.envelope('<tr2:GetSnapshotUriResponse><tr2:Uri>http://cam/s.jpg</tr2:Uri></tr2:GetSnapshotUriResponse>'),
        ),
        'GetSnapshotUri',
      ),
    ).toBe('http://cam/s.jpg');
    expect(readMediaUri(await body(R.envelope('<trt:GetStreamUriResponse/>')), 'GetStreamUri')).toBeNull();
  });

  const media2Uri = capture('easy_onvif_workspace/ENP1A14-IR_25X/media2/GetStreamUriResponse.xml');
  it.skipIf(!media2Uri)('reads a real Media2 GetStreamUri capture', async () => {
    expect(readMediaUri(await body(media2Uri!), 'GetStreamUri')).toBe(
      'rtsp://192.168.1.182/Streaming/Channels/101?transportmode=unicast&profile=Profile_1',
    );
  });
});

describe('events readers', () => {
  it('reads the subscription address and an Axis subscription id', async () => {
    const axis = R.envelope(
      '<tev:CreatePullPointSubscriptionResponse><tev:SubscriptionReference><wsa:Address>http://cam/pull</wsa:Address><wsa:ReferenceParameters><dom0:SubscriptionId xmlns:dom0="http://www.axis.com/2009/event">7</dom0:SubscriptionId></wsa:ReferenceParameters></tev:SubscriptionReference></tev:CreatePullPointSubscriptionResponse>',
    );
    expect(readSubscription(await body(axis))).toEqual({
      address: 'http://cam/pull',
      axisSubscriptionId: '7',
      lifetimeMs: null,
    });
    expect(() => readSubscription({ createPullPointSubscriptionResponse: [''] })).toThrow(/without an address/);
  });

  // Cameras grant the lifetime they like, whatever was asked: the pull loop renews at half of it.
  const times = (current: string, termination: string) =>
    `<wsnt:CurrentTime>${current}</wsnt:CurrentTime><wsnt:TerminationTime>${termination}</wsnt:TerminationTime>`;
  it.each([
    ['60 s granted', times('2026-10-03T02:27:19Z', '2026-10-03T02:28:19Z'), 60_000],
    ['10 s, with fractions and an offset', times('2026-10-03T04:27:19.500+02:00', '2026-10-03T02:27:29.5Z'), 10_000],
    ['termination before current time', times('2026-10-03T02:27:19Z', '2026-10-03T02:27:18Z'), null],
    ['a duration instead of a date', times('2026-10-03T02:27:19Z', 'PT60S'), null],
    ['no times at all', '', null],
  ])('reads the granted lifetime of a subscription and a renewal: %s', async (_name, inner, expected) => {
    const created = R.envelope(
      `<tev:CreatePullPointSubscriptionResponse><tev:SubscriptionReference><wsa:Address>http://cam/pull</wsa:Address></tev:SubscriptionReference>${inner}</tev:CreatePullPointSubscriptionResponse>`,
    );
    expect(readSubscription(await body(created)).lifetimeMs).toBe(expected);
    expect(readRenew(await body(R.envelope(`<wsnt:RenewResponse>${inner}</wsnt:RenewResponse>`)))).toBe(expected);
  });

  const created = capture('2BAD-onvif/dvc/dcn-bf5365/events.CreatePullPointSubscription.xml');
  it.skipIf(!created)('reads the 60 s a real camera granted to a subscription', async () => {
    expect(readSubscription(await body(created!)).lifetimeMs).toBe(60_000);
  });
});

describe('parseSoapBody', () => {
  const fault = capture('easy_onvif_workspace/ENP1A14-IR_25X/device_management/Fault.xml');
  it.skipIf(!fault)('reads a real fault with nested subcodes', async () => {
    const err = await body(fault!).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SoapFaultError);
    expect((err as SoapFaultError).codes).toEqual(['Sender', 'OperationProhibited', 'Password']);
    expect(isAuthFault(err as SoapFaultError)).toBe(false);
  });

  const unauthorized = capture('2BAD-onvif/dvc/dcn-bf5365/device.GetSystemDateAndTimeUnauthorizedFault.xml');
  it.skipIf(!unauthorized)(
    'takes a real "HTTP Error: 401 Unauthorized" fault for an authentication refusal',
    async () => {
      const err = await body(unauthorized!).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(SoapFaultError);
      expect(isAuthFault(err as SoapFaultError)).toBe(true);
    },
  );

  it.each<[string, string, string]>([
    ['the simulator refusing a token', R.fault('env:Sender', 'ter:NotAuthorized', 'Sender not Authorized'), 'auth'],
    [
      'ActionNotSupported',
      R.fault('env:Receiver', 'ter:ActionNotSupported', 'Optional Action Not Implemented'),
      'other',
    ],
    [
      'a WS-Security SOAP 1.1 fault',
      '<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/"><s:Body><s:Fault><faultcode>wsse:FailedAuthentication</faultcode><faultstring>x</faultstring></s:Fault></s:Body></s:Envelope>',
      'auth',
    ],
  ])('%s', async (_name, xml, kind) => {
    const err = await body(xml).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SoapFaultError);
    expect(isAuthFault(err as SoapFaultError) ? 'auth' : 'other').toBe(kind);
  });

  it.each<[string, string]>([
    ['an envelope in another namespace', '<e:Envelope xmlns:e="urn:x"><e:Body><a/></e:Body></e:Envelope>'],
    ['an envelope with no namespace', '<Envelope><Body><a/></Body></Envelope>'],
    ['an empty Body', R.envelope('')],
    ['no Envelope at all', '<html><body>hi</body></html>'],
    [
      'truncated XML',
      R.deviceInformation({ manufacturer: 'a', model: 'b', firmware: 'c', serial: 'd', hardwareId: 'e' }).slice(0, 300),
    ],
  ])('%s is refused', async (_name, xml) => {
    await expect(body(xml)).rejects.toBeInstanceOf(SoapXmlError);
  });
});
