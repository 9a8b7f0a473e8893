// SOAP answers of the simulated camera, shaped like the real firmware captures in
// ../shared/onvif-captures (SOAP 1.2, the usual tds/trt/tev/tt prefixes). Pure string builders.

const NS = [
  'xmlns:env="http://www.w3.org/2003/05/soap-envelope"',
  'xmlns:tds="http://www.onvif.org/ver10/device/wsdl"',
  'xmlns:trt="http://www.onvif.org/ver10/media/wsdl"',
  'xmlns:tev="http://www.onvif.org/ver10/events/wsdl"',
  'xmlns:tptz="http://www.onvif.org/ver20/ptz/wsdl"',
  'xmlns:tt="http://www.onvif.org/ver10/schema"',
  'xmlns:wsnt="http://docs.oasis-open.org/wsn/b-2"',
  'xmlns:wsa="http://www.w3.org/2005/08/addressing"',
  'xmlns:ter="http://www.onvif.org/ver10/error"',
  'xmlns:tns1="http://www.onvif.org/ver10/topics"',
  'xmlns:tnsaxis="http://www.axis.com/2009/event/topics"',
  'xmlns:tptopic="http://www.tp-link.com/onvif/event/topics"',
].join(' ');

export const envelope = (body: string): string =>
  `<?xml version="1.0" encoding="UTF-8"?>\n<env:Envelope ${NS}><env:Header/><env:Body>${body}</env:Body></env:Envelope>`;

export const escapeXml = (s: string): string => s.replace(/[<>&"']/g, (c) => `&#${c.charCodeAt(0)};`);

export function fault(code: 'env:Sender' | 'env:Receiver', subcode: string, reason: string): string {
  return envelope(
    `<env:Fault><env:Code><env:Value>${code}</env:Value><env:Subcode><env:Value>${subcode}</env:Value></env:Subcode></env:Code>` +
      `<env:Reason><env:Text xml:lang="en">${escapeXml(reason)}</env:Text></env:Reason></env:Fault>`,
  );
}

export function systemDateAndTime(nowMs: number): string {
  const d = new Date(nowMs);
  return envelope(
    `<tds:GetSystemDateAndTimeResponse><tds:SystemDateAndTime><tt:DateTimeType>Manual</tt:DateTimeType><tt:DaylightSavings>false</tt:DaylightSavings>` +
      `<tt:TimeZone><tt:TZ>UTC0</tt:TZ></tt:TimeZone><tt:UTCDateTime><tt:Time><tt:Hour>${d.getUTCHours()}</tt:Hour><tt:Minute>${d.getUTCMinutes()}</tt:Minute><tt:Second>${d.getUTCSeconds()}</tt:Second></tt:Time>` +
      `<tt:Date><tt:Year>${d.getUTCFullYear()}</tt:Year><tt:Month>${d.getUTCMonth() + 1}</tt:Month><tt:Day>${d.getUTCDate()}</tt:Day></tt:Date></tt:UTCDateTime></tds:SystemDateAndTime></tds:GetSystemDateAndTimeResponse>`,
  );
}

export interface CameraIdentity {
  manufacturer: string;
  model: string;
  firmware: string;
  serial: string;
  hardwareId: string;
}

export const deviceInformation = (id: CameraIdentity): string =>
  envelope(
    `<tds:GetDeviceInformationResponse><tds:Manufacturer>${escapeXml(id.manufacturer)}</tds:Manufacturer><tds:Model>${escapeXml(id.model)}</tds:Model>` +
      `<tds:FirmwareVersion>${escapeXml(id.firmware)}</tds:FirmwareVersion><tds:SerialNumber>${escapeXml(id.serial)}</tds:SerialNumber>` +
      `<tds:HardwareId>${escapeXml(id.hardwareId)}</tds:HardwareId></tds:GetDeviceInformationResponse>`,
  );

/** `ptz`: the camera lists its PTZ service (a fixed camera has none). */
export const services = (base: string, opts: { ptz?: boolean } = {}): string =>
  envelope(
    `<tds:GetServicesResponse>` +
      [
        ['http://www.onvif.org/ver10/device/wsdl', '/onvif/device_service'],
        ['http://www.onvif.org/ver10/media/wsdl', '/onvif/media_service'],
        ['http://www.onvif.org/ver10/events/wsdl', '/onvif/event_service'],
        ...(opts.ptz ? [['http://www.onvif.org/ver20/ptz/wsdl', '/onvif/ptz_service']] : []),
      ]
        .map(
          ([ns, path]) =>
            `<tds:Service><tds:Namespace>${ns}</tds:Namespace><tds:XAddr>${base}${path}</tds:XAddr><tds:Version><tt:Major>2</tt:Major><tt:Minor>60</tt:Minor></tds:Version></tds:Service>`,
        )
        .join('') +
      `</tds:GetServicesResponse>`,
  );

export const capabilities = (base: string, opts: { ptz?: boolean } = {}): string =>
  envelope(
    `<tds:GetCapabilitiesResponse><tds:Capabilities>` +
      `<tt:Device><tt:XAddr>${base}/onvif/device_service</tt:XAddr></tt:Device>` +
      `<tt:Events><tt:XAddr>${base}/onvif/event_service</tt:XAddr><tt:WSSubscriptionPolicySupport>false</tt:WSSubscriptionPolicySupport><tt:WSPullPointSupport>true</tt:WSPullPointSupport></tt:Events>` +
      `<tt:Media><tt:XAddr>${base}/onvif/media_service</tt:XAddr><tt:StreamingCapabilities><tt:RTPMulticast>false</tt:RTPMulticast><tt:RTP_TCP>true</tt:RTP_TCP><tt:RTP_RTSP_TCP>true</tt:RTP_RTSP_TCP></tt:StreamingCapabilities></tt:Media>` +
      (opts.ptz ? `<tt:PTZ><tt:XAddr>${base}/onvif/ptz_service</tt:XAddr></tt:PTZ>` : '') +
      `</tds:Capabilities></tds:GetCapabilitiesResponse>`,
  );

export interface SimProfile {
  token: string;
  name: string;
  width: number;
  height: number;
}

/** `ptz`: each profile carries the camera's PTZ configuration (ptzConfiguration below). */
export const profiles = (list: SimProfile[], opts: { ptz?: boolean } = {}): string =>
  envelope(
    `<trt:GetProfilesResponse>` +
      list
        .map(
          (p) =>
            `<trt:Profiles token="${p.token}" fixed="true"><tt:Name>${escapeXml(p.name)}</tt:Name>` +
            `<tt:VideoSourceConfiguration token="VideoSourceConfig_1"><tt:Name>VideoSource_1</tt:Name><tt:UseCount>2</tt:UseCount><tt:SourceToken>VideoSource_1</tt:SourceToken><tt:Bounds x="0" y="0" width="${p.width}" height="${p.height}"/></tt:VideoSourceConfiguration>` +
            `<tt:VideoEncoderConfiguration token="VideoEncoder_${p.token}"><tt:Name>${escapeXml(p.name)}</tt:Name><tt:UseCount>1</tt:UseCount><tt:Encoding>H264</tt:Encoding>` +
            `<tt:Resolution><tt:Width>${p.width}</tt:Width><tt:Height>${p.height}</tt:Height></tt:Resolution><tt:Quality>4</tt:Quality>` +
            `<tt:RateControl><tt:FrameRateLimit>15</tt:FrameRateLimit><tt:EncodingInterval>1</tt:EncodingInterval><tt:BitrateLimit>1024</tt:BitrateLimit></tt:RateControl>` +
            `<tt:H264><tt:GovLength>30</tt:GovLength><tt:H264Profile>Main</tt:H264Profile></tt:H264><tt:SessionTimeout>PT60S</tt:SessionTimeout></tt:VideoEncoderConfiguration>` +
            (opts.ptz ? ptzConfiguration('tt:PTZConfiguration') : '') +
            `</trt:Profiles>`,
        )
        .join('') +
      `</trt:GetProfilesResponse>`,
  );

export const streamUri = (uri: string): string =>
  envelope(
    `<trt:GetStreamUriResponse><trt:MediaUri><tt:Uri>${escapeXml(uri)}</tt:Uri><tt:InvalidAfterConnect>false</tt:InvalidAfterConnect><tt:InvalidAfterReboot>false</tt:InvalidAfterReboot><tt:Timeout>PT0S</tt:Timeout></trt:MediaUri></trt:GetStreamUriResponse>`,
  );

export const snapshotUri = (uri: string): string =>
  envelope(
    `<trt:GetSnapshotUriResponse><trt:MediaUri><tt:Uri>${escapeXml(uri)}</tt:Uri><tt:InvalidAfterConnect>false</tt:InvalidAfterConnect><tt:InvalidAfterReboot>false</tt:InvalidAfterReboot><tt:Timeout>PT0S</tt:Timeout></trt:MediaUri></trt:GetSnapshotUriResponse>`,
  );

export const systemReboot = (): string =>
  envelope(`<tds:SystemRebootResponse><tds:Message>Rebooting in 1 seconds</tds:Message></tds:SystemRebootResponse>`);

export const setSystemDateAndTime = (): string => envelope(`<tds:SetSystemDateAndTimeResponse/>`);

export const createPullPoint = (address: string, nowMs: number, terminationMs: number): string =>
  envelope(
    `<tev:CreatePullPointSubscriptionResponse><tev:SubscriptionReference><wsa:Address>${escapeXml(address)}</wsa:Address></tev:SubscriptionReference>` +
      `<wsnt:CurrentTime>${new Date(nowMs).toISOString()}</wsnt:CurrentTime><wsnt:TerminationTime>${new Date(terminationMs).toISOString()}</wsnt:TerminationTime></tev:CreatePullPointSubscriptionResponse>`,
  );

export const renew = (nowMs: number, terminationMs: number): string =>
  envelope(
    `<wsnt:RenewResponse><wsnt:TerminationTime>${new Date(terminationMs).toISOString()}</wsnt:TerminationTime><wsnt:CurrentTime>${new Date(nowMs).toISOString()}</wsnt:CurrentTime></wsnt:RenewResponse>`,
  );

export const unsubscribe = (): string => envelope(`<wsnt:UnsubscribeResponse/>`);

/** One camera notification in a vendor's topic style (see SimEvent in camera.ts). */
export interface SimNotification {
  topic: string; // with prefix, e.g. tns1:RuleEngine/CellMotionDetector/Motion
  operation: 'Initialized' | 'Changed';
  utcMs: number;
  source: Array<[string, string]>;
  data: Array<[string, string]>;
}

const items = (list: Array<[string, string]>) =>
  list.map(([n, v]) => `<tt:SimpleItem Name="${escapeXml(n)}" Value="${escapeXml(v)}"/>`).join('');

export const pullMessages = (nowMs: number, terminationMs: number, messages: SimNotification[]): string =>
  envelope(
    `<tev:PullMessagesResponse><tev:CurrentTime>${new Date(nowMs).toISOString()}</tev:CurrentTime><tev:TerminationTime>${new Date(terminationMs).toISOString()}</tev:TerminationTime>` +
      messages
        .map(
          (m) =>
            `<wsnt:NotificationMessage><wsnt:Topic Dialect="http://www.onvif.org/ver10/tev/topicExpression/ConcreteSet">${escapeXml(m.topic)}</wsnt:Topic>` +
            `<wsnt:Message><tt:Message UtcTime="${new Date(m.utcMs).toISOString()}" PropertyOperation="${m.operation}"><tt:Source>${items(m.source)}</tt:Source><tt:Data>${items(m.data)}</tt:Data></tt:Message></wsnt:Message></wsnt:NotificationMessage>`,
        )
        .join('') +
      `</tev:PullMessagesResponse>`,
  );

// --- PTZ (ver20), shaped like the captured PTZ cameras' configurations: generic spaces by default.

const SPACE = 'http://www.onvif.org/ver10/tptz';
export const SIM_PTZ = {
  configuration: 'PTZConfig_1',
  node: 'PTZNode_1',
  /** The field-of-view translation space runs over ±100 (a percentage of half the view, as some firmware has it). */
  fovRange: 100,
  /** The Timeout a ContinuousMove may carry. */
  timeoutMinS: 1,
  timeoutMaxS: 60,
  maxPresets: 64,
} as const;

const range = (min: number, max: number) => `<tt:Min>${min}</tt:Min><tt:Max>${max}</tt:Max>`;
const space2d = (el: string, uri: string, min: number, max: number) =>
  `<tt:${el}><tt:URI>${uri}</tt:URI><tt:XRange>${range(min, max)}</tt:XRange><tt:YRange>${range(min, max)}</tt:YRange></tt:${el}>`;
const space1d = (el: string, uri: string, min: number, max: number) =>
  `<tt:${el}><tt:URI>${uri}</tt:URI><tt:XRange>${range(min, max)}</tt:XRange></tt:${el}>`;

/** The PTZ spaces the simulated camera supports; `fov`: with the field-of-view translation space. */
function ptzSpaces(fov: boolean): string {
  return (
    space2d('AbsolutePanTiltPositionSpace', `${SPACE}/PanTiltSpaces/PositionGenericSpace`, -1, 1) +
    space1d('AbsoluteZoomPositionSpace', `${SPACE}/ZoomSpaces/PositionGenericSpace`, 0, 1) +
    space2d('RelativePanTiltTranslationSpace', `${SPACE}/PanTiltSpaces/TranslationGenericSpace`, -1, 1) +
    (fov
      ? space2d(
          'RelativePanTiltTranslationSpace',
          `${SPACE}/PanTiltSpaces/TranslationSpaceFov`,
          -SIM_PTZ.fovRange,
          SIM_PTZ.fovRange,
        )
      : '') +
    space1d('RelativeZoomTranslationSpace', `${SPACE}/ZoomSpaces/TranslationGenericSpace`, -1, 1) +
    space2d('ContinuousPanTiltVelocitySpace', `${SPACE}/PanTiltSpaces/VelocityGenericSpace`, -1, 1) +
    space1d('ContinuousZoomVelocitySpace', `${SPACE}/ZoomSpaces/VelocityGenericSpace`, -1, 1) +
    space1d('PanTiltSpeedSpace', `${SPACE}/PanTiltSpaces/GenericSpeedSpace`, 0, 1) +
    space1d('ZoomSpeedSpace', `${SPACE}/ZoomSpaces/ZoomGenericSpeedSpace`, 0, 1)
  );
}

/** A PTZConfiguration element (in a profile: tt:PTZConfiguration; in GetConfigurations: tptz:PTZConfiguration). */
export const ptzConfiguration = (element: string): string =>
  `<${element} token="${SIM_PTZ.configuration}"><tt:Name>PTZ</tt:Name><tt:UseCount>2</tt:UseCount><tt:NodeToken>${SIM_PTZ.node}</tt:NodeToken>` +
  `<tt:DefaultAbsolutePantTiltPositionSpace>${SPACE}/PanTiltSpaces/PositionGenericSpace</tt:DefaultAbsolutePantTiltPositionSpace>` +
  `<tt:DefaultAbsoluteZoomPositionSpace>${SPACE}/ZoomSpaces/PositionGenericSpace</tt:DefaultAbsoluteZoomPositionSpace>` +
  `<tt:DefaultRelativePanTiltTranslationSpace>${SPACE}/PanTiltSpaces/TranslationGenericSpace</tt:DefaultRelativePanTiltTranslationSpace>` +
  `<tt:DefaultRelativeZoomTranslationSpace>${SPACE}/ZoomSpaces/TranslationGenericSpace</tt:DefaultRelativeZoomTranslationSpace>` +
  `<tt:DefaultContinuousPanTiltVelocitySpace>${SPACE}/PanTiltSpaces/VelocityGenericSpace</tt:DefaultContinuousPanTiltVelocitySpace>` +
  `<tt:DefaultContinuousZoomVelocitySpace>${SPACE}/ZoomSpaces/VelocityGenericSpace</tt:DefaultContinuousZoomVelocitySpace>` +
  `<tt:DefaultPTZTimeout>PT10S</tt:DefaultPTZTimeout></${element}>`;

export const ptzServiceCapabilities = (): string =>
  envelope(
    '<tptz:GetServiceCapabilitiesResponse><tptz:Capabilities EFlip="false" Reverse="false" GetCompatibleConfigurations="true" MoveStatus="true" StatusPosition="true"/></tptz:GetServiceCapabilitiesResponse>',
  );

export const ptzNodes = (opts: { fov: boolean; homeSupported: boolean }): string =>
  envelope(
    `<tptz:GetNodesResponse><tptz:PTZNode token="${SIM_PTZ.node}" FixedHomePosition="false" GeoMove="false"><tt:Name>PTZ</tt:Name>` +
      `<tt:SupportedPTZSpaces>${ptzSpaces(opts.fov)}</tt:SupportedPTZSpaces>` +
      `<tt:MaximumNumberOfPresets>${SIM_PTZ.maxPresets}</tt:MaximumNumberOfPresets><tt:HomeSupported>${opts.homeSupported}</tt:HomeSupported>` +
      `</tptz:PTZNode></tptz:GetNodesResponse>`,
  );

export const ptzConfigurations = (): string =>
  envelope(
    `<tptz:GetConfigurationsResponse>${ptzConfiguration('tptz:PTZConfiguration')}</tptz:GetConfigurationsResponse>`,
  );

export const ptzConfigurationOptions = (opts: { fov: boolean }): string =>
  envelope(
    `<tptz:GetConfigurationOptionsResponse><tptz:PTZConfigurationOptions><tt:Spaces>${ptzSpaces(opts.fov)}</tt:Spaces>` +
      `<tt:PTZTimeout><tt:Min>PT${SIM_PTZ.timeoutMinS}S</tt:Min><tt:Max>PT${SIM_PTZ.timeoutMaxS}S</tt:Max></tt:PTZTimeout>` +
      `</tptz:PTZConfigurationOptions></tptz:GetConfigurationOptionsResponse>`,
  );

export interface SimPosition {
  pan: number;
  tilt: number;
  zoom: number;
}

const position = (p: SimPosition) =>
  `<tt:PanTilt x="${p.pan}" y="${p.tilt}" space="${SPACE}/PanTiltSpaces/PositionGenericSpace"/>` +
  `<tt:Zoom x="${p.zoom}" space="${SPACE}/ZoomSpaces/PositionGenericSpace"/>`;

export const ptzPresets = (list: ReadonlyArray<{ token: string; name: string; position: SimPosition }>): string =>
  envelope(
    `<tptz:GetPresetsResponse>` +
      list
        .map(
          (p) =>
            `<tptz:Preset token="${escapeXml(p.token)}"><tt:Name>${escapeXml(p.name)}</tt:Name><tt:PTZPosition>${position(p.position)}</tt:PTZPosition></tptz:Preset>`,
        )
        .join('') +
      `</tptz:GetPresetsResponse>`,
  );

export const ptzSetPreset = (token: string): string =>
  envelope(`<tptz:SetPresetResponse><tptz:PresetToken>${escapeXml(token)}</tptz:PresetToken></tptz:SetPresetResponse>`);

/** The empty answer of an operation that returns nothing (ContinuousMove, Stop, GotoPreset…). */
export const ptzDone = (operation: string): string => envelope(`<tptz:${operation}Response/>`);

export const ptzStatus = (p: SimPosition, moving: boolean, nowMs: number): string =>
  envelope(
    `<tptz:GetStatusResponse><tptz:PTZStatus><tt:Position>${position(p)}</tt:Position>` +
      `<tt:MoveStatus><tt:PanTilt>${moving ? 'MOVING' : 'IDLE'}</tt:PanTilt><tt:Zoom>${moving ? 'MOVING' : 'IDLE'}</tt:Zoom></tt:MoveStatus>` +
      `<tt:UtcTime>${new Date(nowMs).toISOString()}</tt:UtcTime></tptz:PTZStatus></tptz:GetStatusResponse>`,
  );
