#!/usr/bin/python3
"""RTSP server of the camera simulator: GStreamer's gst-rtsp-server (Debian packages python3-gi,
gir1.2-gst-rtsp-server-1.0, gstreamer1.0-plugins-good/-base) with Digest authentication.

Each mount re-serves an H.264 RTP stream that ffmpeg sends to a loopback UDP port (ffmpeg makes
the video from its test source; see rtsp.ts). Mounts are shared: every client of one path watches
the same stream, as with a camera.

Usage: rtsp_server.py --port P --user U --password W --mount /cam0/main=5000 [--mount ...]
Prints {"listening": port} as one JSON line when it accepts connections; runs until SIGTERM.
"""

import argparse
import json
import signal
import sys

import gi

gi.require_version("Gst", "1.0")
gi.require_version("GstRtsp", "1.0")
gi.require_version("GstRtspServer", "1.0")
from gi.repository import GLib, Gst, GstRtsp, GstRtspServer  # noqa: E402

CAPS = "application/x-rtp,media=video,clock-rate=90000,encoding-name=H264,payload=96"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=8556)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--user", required=True)
    parser.add_argument("--password", required=True)
    parser.add_argument("--mount", action="append", default=[], help="PATH=UDP_PORT")
    args = parser.parse_args()

    Gst.init(None)
    server = GstRtspServer.RTSPServer()
    server.set_address(args.host)
    server.set_service(str(args.port))

    auth = GstRtspServer.RTSPAuth()
    auth.set_supported_methods(GstRtsp.RTSPAuthMethod.DIGEST)
    token = GstRtspServer.RTSPToken.new()
    token.set_string(GstRtspServer.RTSP_TOKEN_MEDIA_FACTORY_ROLE, "viewer")
    auth.add_digest(args.user, args.password, token)
    server.set_auth(auth)

    mounts = server.get_mount_points()
    for spec in args.mount:
        path, udp_port = spec.split("=", 1)
        factory = GstRtspServer.RTSPMediaFactory()
        factory.set_launch(
            f'( udpsrc address=127.0.0.1 port={int(udp_port)} caps="{CAPS}" ! rtph264depay '
            f"! h264parse config-interval=-1 ! rtph264pay name=pay0 pt=96 config-interval=-1 )"
        )
        factory.set_shared(True)
        factory.add_role_from_structure(
            Gst.Structure.from_string("viewer, media.factory.access=(boolean)true, media.factory.construct=(boolean)true")[0]
        )
        mounts.add_factory(path, factory)

    if server.attach(None) == 0:
        print(json.dumps({"error": f"cannot listen on {args.host}:{args.port}"}), flush=True)
        sys.exit(1)
    print(json.dumps({"listening": server.get_bound_port()}), flush=True)

    loop = GLib.MainLoop()
    GLib.unix_signal_add(GLib.PRIORITY_DEFAULT, signal.SIGTERM, loop.quit)
    GLib.unix_signal_add(GLib.PRIORITY_DEFAULT, signal.SIGINT, loop.quit)
    loop.run()


if __name__ == "__main__":
    main()
