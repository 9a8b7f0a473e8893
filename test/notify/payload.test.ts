import { describe, expect, it } from 'vitest';
import {
  alertPayloadText,
  alertTitle,
  eventUrl,
  MAX_PAYLOAD_BYTES,
  pictureBudget,
  testPayloadText,
  topicOf,
  urgencyOf,
  type AlertFacts,
} from '../../src/notify/payload.js';

const facts: AlertFacts = {
  alertId: 'alr_1',
  deviceId: 'dev_front',
  deviceName: 'Front door',
  type: 'human',
  message: 'Person detected at Front door',
  createdAt: Date.UTC(2026, 10, 20, 21, 3, 5, 120),
};

describe('the push payload', () => {
  it.each([
    ['human', 'Person at Front door'],
    ['vehicle', 'Vehicle at Front door'],
    ['motion', 'Motion at Front door'],
    ['device_offline', 'Front door is offline'],
  ] as const)('titles a %s alert "%s"', (type, title) => {
    expect(alertTitle(type, 'Front door')).toBe(title);
  });

  it('names the event page of the web app, relative to its origin', () => {
    expect(eventUrl('dev_a b', 'alr_1')).toBe('/events?camera=dev_a%20b&alert=alr_1');
  });

  it('carries the alert, and a picture that fits as a data: URL', () => {
    const jpeg = Buffer.concat([Buffer.from([0xff, 0xd8]), Buffer.alloc(1500, 7), Buffer.from([0xff, 0xd9])]);
    const { text, withImage } = alertPayloadText(facts, jpeg);
    expect(withImage).toBe(true);
    expect(JSON.parse(text)).toEqual({
      title: 'Person at Front door',
      body: 'Person detected at Front door',
      alert_id: 'alr_1',
      device_id: 'dev_front',
      type: 'human',
      created_at: '2026-11-20T21:03:05.120Z',
      url: '/events?camera=dev_front&alert=alr_1',
      image: `data:image/jpeg;base64,${jpeg.toString('base64')}`,
    });
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(MAX_PAYLOAD_BYTES);
  });

  it('fits a picture of exactly the budget into one record, and leaves out one byte more', () => {
    const budget = pictureBudget(facts);
    expect(budget).toBeGreaterThan(2500);
    const fits = alertPayloadText(facts, Buffer.alloc(budget, 1));
    expect(fits.withImage).toBe(true);
    expect(Buffer.byteLength(fits.text)).toBeLessThanOrEqual(MAX_PAYLOAD_BYTES);
    const over = alertPayloadText(facts, Buffer.alloc(budget + 3, 1));
    expect(over.withImage).toBe(false);
    expect((JSON.parse(over.text) as { image: unknown }).image).toBeNull();
  });

  it('leaves room for the longest camera name and multi-byte text', () => {
    const long = { ...facts, deviceName: 'Ü'.repeat(100), message: `Person detected at ${'Ü'.repeat(100)}` };
    const budget = pictureBudget(long);
    const { text, withImage } = alertPayloadText(long, Buffer.alloc(budget, 1));
    expect(withImage).toBe(true);
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(MAX_PAYLOAD_BYTES);
  });

  it('has a test payload of its own', () => {
    expect(JSON.parse(testPayloadText(Date.UTC(2026, 0, 1)))).toEqual({
      title: 'Test notification',
      body: 'Notifications from this gateway reach this device.',
      alert_id: null,
      device_id: null,
      type: 'test',
      created_at: '2026-01-01T00:00:00.000Z',
      url: '/events',
      image: null,
    });
  });

  it('gives each camera a Topic of at most 32 base64url characters, and wakes phones for people and vehicles', () => {
    expect(topicOf('dev_front')).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(topicOf('dev_front')).toBe(topicOf('dev_front'));
    expect(topicOf('dev_back')).not.toBe(topicOf('dev_front'));
    expect(urgencyOf('human')).toBe('high');
    expect(urgencyOf('vehicle')).toBe('high');
    expect(urgencyOf('motion')).toBe('normal');
    expect(urgencyOf('device_offline')).toBe('normal');
  });
});
