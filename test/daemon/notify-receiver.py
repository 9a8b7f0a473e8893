"""Stand-in for systemd's notification socket, for test/systemd/sd-notify.test.ts.

Binds an AF_UNIX SOCK_DGRAM socket at argv[1] and prints one JSON line per
datagram: {"text", "fds", "pid", "uid"}. The first line is {"listening": path}
so the test knows when sending can start.

systemd-notify (systemd >= 246) follows each message with BARRIER=1 carrying
the write end of a pipe in SCM_RIGHTS, then waits until every copy of that end
is closed. PID 1 answers by closing its copy after processing the queue, so
this receiver closes every passed descriptor as soon as it has read the
datagram; otherwise systemd-notify would block for its 5 s barrier timeout.
"""

import array
import json
import os
import socket
import struct
import sys

MAX_FDS = 16


def main() -> None:
    path = sys.argv[1]
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    # Like PID 1: the kernel attaches the sender's pid/uid, which shows who sent.
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
    sock.bind(path)
    # An unprivileged sender (as under User=edge-gateway) must be able to connect.
    os.chmod(path, 0o666)
    print(json.dumps({"listening": path}), flush=True)

    ancillary_size = socket.CMSG_SPACE(MAX_FDS * 4) + socket.CMSG_SPACE(12)
    while True:
        data, ancillary, _flags, _addr = sock.recvmsg(65536, ancillary_size)
        fds = []
        pid = uid = None
        for level, kind, payload in ancillary:
            if level != socket.SOL_SOCKET:
                continue
            if kind == socket.SCM_RIGHTS:
                ints = array.array("i")
                ints.frombytes(payload[: len(payload) - len(payload) % ints.itemsize])
                fds.extend(ints)
            elif kind == socket.SCM_CREDENTIALS:
                pid, uid, _gid = struct.unpack("iII", payload[:12])
        # Report first, then release the barrier: the line is in the pipe before systemd-notify returns.
        print(
            json.dumps({"text": data.decode("utf-8", "replace"), "fds": len(fds), "pid": pid, "uid": uid}),
            flush=True,
        )
        for fd in fds:
            os.close(fd)


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        pass
