#!/usr/bin/python3
"""A viewer that stops reading: PLAYs an RTSP URL over TCP, then never reads again.

Its receive buffer is made tiny before connecting (Node cannot do that for TCP), so the sender's
queue grows within seconds instead of after megabytes of kernel buffering.
Usage: stalled_rtsp_viewer.py PORT URL. Prints "playing" once PLAY is answered; runs until killed.
"""

import socket
import sys
import time

port, url = int(sys.argv[1]), sys.argv[2]
sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
sock.connect(("127.0.0.1", port))


def ask(cseq: int, method: str, uri: str, extra: str = "") -> str:
    sock.sendall(f"{method} {uri} RTSP/1.0\r\nCSeq: {cseq}\r\n{extra}\r\n".encode())
    data = b""
    while b"\r\n\r\n" not in data:
        data += sock.recv(1)
    head = data.decode("latin-1")
    length = next((int(l.split(":", 1)[1]) for l in head.split("\r\n") if l.lower().startswith("content-length:")), 0)
    while length > 0:
        length -= len(sock.recv(length))
    return head


ask(1, "DESCRIBE", url)
setup = ask(2, "SETUP", url + "/trackID=0", "Transport: RTP/AVP/TCP;unicast;interleaved=0-1\r\n")
session = next(l.split(":", 1)[1].strip().split(";")[0] for l in setup.split("\r\n") if l.lower().startswith("session:"))
# PLAY's answer comes before any RTP on this connection; after it, nothing is read.
ask(3, "PLAY", url, f"Session: {session}\r\n")
print("playing", flush=True)
time.sleep(600)
