// hls.js's light build (no subtitles, DRM or alternate audio: the gateway's LL-HLS has none) has no
// types of its own in the package's exports; it is the same class as the full build.
declare module 'hls.js/light' {
  import Hls from 'hls.js';
  export default Hls;
}
