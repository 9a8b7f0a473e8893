// A push message of the gateway for an alert (web/src/push.ts, AlertPush), for the tests of how the
// app shows it: the unit tests' and the browser's.
export const ALERT_PUSH = {
  title: 'Person at Front door',
  body: 'Seen at 14:02',
  alert_id: 'alr_1',
  device_id: 'dev_front',
  type: 'person',
  created_at: '2025-06-01T14:02:00.000Z',
  url: '/events?camera=dev_front',
  image: 'data:image/jpeg;base64,/9j/4AAQ',
};
