#!/usr/bin/python3
"""RTSP server of the camera simulator: GStreamer's gst-rtsp-server (Debian packages python3-gi,
gir1.2-gst-rtsp-server-1.0, gstreamer1.0-plugins-good/-base) with Digest authentication.

Each mount re-serves what ffmpeg sends to loopback UDP ports (ffmpeg makes the video and audio
from its test sources, or loops a clip encoded once; see rtsp.ts). Mounts are shared: every client
of one path watches the same stream, as with a camera.

Usage: rtsp_server.py --port P --user U --password W --mount /cam0/main=5000 [--mount ...]
A mount is PATH=UDP_PORT (H.264) or PATH=KIND:UDP_PORT,KIND:UDP_PORT,... with KIND one of h264,
h265, aac or pcmu (all RTP); each becomes one track, in the order given.
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

# Tracks of the extra mounts, each from RTP that ffmpeg sends (see rtsp.ts). Only elements of
# gstreamer1.0-plugins-base/-good: no h264parse/h265parse (plugins-bad). They are not needed: ffmpeg
# puts the parameter sets in front of every keyframe, and the payloaders read them from the stream
# for the SDP's sprop-*. config-interval=0 because inserting them again would put them before every
# IDR slice, and x264's multi-slice pictures would then look like two pictures to clients.
# The jitter buffer (mode=none) times buffers by their RTP timestamps; udpsrc's arrival times would
# make the payloaders send jittery timestamps, and clients then see frames out of order.
JITTER = "rtpjitterbuffer latency=100 mode=none"
# AAC-LC, 16 kHz, mono: what rtsp.ts has ffmpeg's AAC encoder make.
AAC_CAPS = (
    "application/x-rtp,media=audio,clock-rate=16000,encoding-name=MPEG4-GENERIC,payload=97,mode=(string)AAC-hbr,"
    "config=(string)1408,sizelength=(string)13,indexlength=(string)3,indexdeltalength=(string)3,streamtype=(string)5"
)
TRACKS = {
    "h264": lambda port, n: (
        f'udpsrc address=127.0.0.1 port={port} caps="{CAPS}" ! {JITTER} ! rtph264depay '
        f"! video/x-h264,alignment=au ! rtph264pay name=pay{n} pt={96 + n} config-interval=0"
    ),
    "h265": lambda port, n: (
        f'udpsrc address=127.0.0.1 port={port} caps="{CAPS.replace("H264", "H265")}" ! {JITTER} ! rtph265depay '
        f"! video/x-h265,alignment=au ! rtph265pay name=pay{n} pt={96 + n} config-interval=0"
    ),
    "aac": lambda port, n: f'udpsrc address=127.0.0.1 port={port} caps="{AAC_CAPS}" ! {JITTER} ! rtpmp4gdepay ! rtpmp4gpay name=pay{n} pt={96 + n}',
    "pcmu": lambda port, n: (
        f'udpsrc address=127.0.0.1 port={port} caps="application/x-rtp,media=audio,clock-rate=8000,encoding-name=PCMU,payload=0" '
        f"! {JITTER} ! rtppcmudepay ! rtppcmupay name=pay{n} pt=0"
    ),
}


def launch_line(spec: str) -> str:
    if spec.isdigit():
        # The main and sub mounts: one H.264 track.
        return f"( {TRACKS['h264'](int(spec), 0)} )"
    parts = []
    for n, track in enumerate(spec.split(",")):
        kind, port = track.split(":", 1)
        if kind not in TRACKS:
            raise SystemExit(f"unknown track kind {kind!r} in --mount")
        parts.append(TRACKS[kind](int(port), n))
    return "( " + "  ".join(parts) + " )"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=8556)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--user", required=True)
    parser.add_argument("--password", required=True)
    parser.add_argument("--mount", action="append", default=[], help="PATH=UDP_PORT or PATH=KIND:UDP_PORT,...")
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
        path, tracks = spec.split("=", 1)
        factory = GstRtspServer.RTSPMediaFactory()
        factory.set_launch(launch_line(tracks))
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
