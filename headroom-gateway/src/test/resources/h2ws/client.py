"""A WebSocket client over HTTP/2 (RFC 8441) on Python's h2 package, driven line by line.

Usage: python3 client.py PORT. Opens one cleartext HTTP/2 connection (prior knowledge) to
127.0.0.1:PORT, then reads commands from stdin, one a line, and answers each with one JSON line
on stdout:

  settings                  the server's SETTINGS_ENABLE_CONNECT_PROTOCOL (RFC 8441 section 3)
  open NAME PATH [F=V ...]  an extended CONNECT (:protocol websocket, section 4) on a new stream
                            called NAME, with extra fields F: V; the response's status, fields
                            and (unless 200) body, or the stream's reset code
  connect NAME AUTHORITY    a plain CONNECT (no :protocol), answered the same way
  raw NAME F=V ...          a request of exactly the fields F: V, pseudo-header fields included,
                            unchecked by h2, answered the same way
  text NAME WORDS...        sends WORDS as one masked text message, waits for one message back
  binary NAME N             sends N random bytes as one binary message, waits for one back and
                            says whether it is the same
  close NAME                sends a WebSocket Close (1000), waits for the peer's Close and the
                            stream's end
  end NAME                  ends the client's side of the stream (END_STREAM) and waits for
                            the stream's end
  wait NAME                 waits for the stream's end (END_STREAM or RST_STREAM); says whether
                            END_STREAM came, and the RST_STREAM code if one came
  goaway                    the GOAWAY read so far, without waiting: its error code and last
                            stream id, or null for each

Every wait is bounded by a socket timeout of 20 s; an error is answered {"error": ...}.
WebSocket frames (RFC 6455 section 5) are written and read here; HTTP/2 is h2's.
"""
import json
import os
import socket
import struct
import sys

import h2.config
import h2.connection
import h2.events
import h2.settings


# RFC 9113 section 6.8: after a GOAWAY the streams up to its last stream id go on (a graceful
# shutdown, a drain); h2 takes any GOAWAY as the connection's end and refuses to send or read
# anything after it. The connection stays open here until the socket closes.
h2.connection.H2ConnectionStateMachine._transitions[
    (h2.connection.ConnectionState.CLIENT_OPEN, h2.connection.ConnectionInputs.RECV_GOAWAY)] = (
        None, h2.connection.ConnectionState.CLIENT_OPEN)


class Stream:
    def __init__(self, sid):
        self.id = sid
        self.status = None
        self.headers = {}
        self.body = bytearray()
        self.ended = False
        self.reset = None
        self.fragments = bytearray()
        self.fragment_opcode = None


class Client:
    def __init__(self, port):
        self.port = port
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=20)
        self.conn = h2.connection.H2Connection(
            config=h2.config.H2Configuration(client_side=True, header_encoding="utf-8"))
        self.conn.initiate_connection()
        self.flush()
        self.streams = {}
        self.by_id = {}
        self.settings = None
        self.goaway = None

    def flush(self):
        data = self.conn.data_to_send()
        if data:
            self.sock.sendall(data)

    def pump(self):
        data = self.sock.recv(1 << 16)
        if not data:
            raise EOFError("the gateway closed the connection")
        for ev in self.conn.receive_data(data):
            self.handle(ev)
        self.flush()

    def until(self, done):
        while not done():
            self.pump()

    def handle(self, ev):
        if isinstance(ev, h2.events.ConnectionTerminated):
            self.goaway = (int(ev.error_code), ev.last_stream_id)
            return
        if isinstance(ev, h2.events.RemoteSettingsChanged):
            if self.settings is None:
                self.settings = {}
            for code, change in ev.changed_settings.items():
                self.settings[int(code)] = change.new_value
            return
        st = self.by_id.get(getattr(ev, "stream_id", None))
        if isinstance(ev, h2.events.ResponseReceived) and st:
            for name, value in ev.headers:
                if name == ":status":
                    st.status = int(value)
                else:
                    st.headers[name] = value
        elif isinstance(ev, h2.events.DataReceived):
            self.conn.acknowledge_received_data(ev.flow_controlled_length, ev.stream_id)
            if st:
                st.body += ev.data
        elif isinstance(ev, h2.events.StreamEnded) and st:
            st.ended = True
        elif isinstance(ev, h2.events.StreamReset) and st:
            st.reset = int(ev.error_code)

    def request(self, name, headers):
        sid = self.conn.get_next_available_stream_id()
        st = Stream(sid)
        self.streams[name] = st
        self.by_id[sid] = st
        self.conn.send_headers(sid, headers, end_stream=False)
        self.flush()
        self.until(lambda: st.status is not None or st.reset is not None)
        if st.reset is not None:
            return {"stream": name, "reset": st.reset}
        out = {"stream": name, "status": st.status, "headers": st.headers}
        if st.status != 200:
            self.until(lambda: st.ended or st.reset is not None)
            out["body"] = st.body.decode("utf-8", "replace")
        return out

    def send(self, st, data):
        while data:
            size = min(self.conn.local_flow_control_window(st.id), self.conn.max_outbound_frame_size, len(data))
            if size <= 0:
                self.pump()  # the gateway's WINDOW_UPDATE: it took what was sent
                continue
            self.conn.send_data(st.id, data[:size])
            data = data[size:]
            self.flush()

    def message(self, st):
        """One whole WebSocket message from the stream: (opcode, payload)."""
        while True:
            frame = parse(st.body)
            if frame is None:
                if st.ended or st.reset is not None:
                    raise EOFError("the stream ended before a whole message")
                self.pump()
                continue
            fin, opcode, payload = frame
            if opcode == 0:
                st.fragments += payload
            else:
                st.fragment_opcode = opcode
                st.fragments = bytearray(payload)
            if fin:
                return st.fragment_opcode, bytes(st.fragments)

    def end(self, name):
        st = self.streams[name]
        self.until(lambda: st.ended or st.reset is not None)
        return {"stream": name, "ended": st.ended, "reset": st.reset}


def frame(opcode, payload):
    """A client's frame (RFC 6455 section 5.2): final, masked."""
    n = len(payload)
    if n < 126:
        head = struct.pack("!BB", 0x80 | opcode, 0x80 | n)
    elif n < 1 << 16:
        head = struct.pack("!BBH", 0x80 | opcode, 0x80 | 126, n)
    else:
        head = struct.pack("!BBQ", 0x80 | opcode, 0x80 | 127, n)
    key = os.urandom(4)
    if n == 0:
        return head + key
    mask = (key * (n // 4 + 1))[:n]
    masked = (int.from_bytes(payload, "big") ^ int.from_bytes(mask, "big")).to_bytes(n, "big")
    return head + key + masked


def parse(buf):
    """Takes one server frame off the front of buf: (fin, opcode, payload), or None if incomplete."""
    if len(buf) < 2:
        return None
    fin, opcode = buf[0] & 0x80, buf[0] & 0x0F
    n, at = buf[1] & 0x7F, 2
    if n == 126:
        if len(buf) < 4:
            return None
        n, at = struct.unpack("!H", buf[2:4])[0], 4
    elif n == 127:
        if len(buf) < 10:
            return None
        n, at = struct.unpack("!Q", buf[2:10])[0], 10
    if buf[1] & 0x80:
        raise ValueError("a server's frame is not masked (RFC 6455 section 5.1)")
    if len(buf) < at + n:
        return None
    payload = bytes(buf[at:at + n])
    del buf[:at + n]
    return bool(fin), opcode, payload


def main():
    client = Client(int(sys.argv[1]))
    authority = "127.0.0.1:%d" % client.port
    for line in sys.stdin:
        words = line.split()
        if not words:
            continue
        cmd, args = words[0], words[1:]
        try:
            if cmd == "quit":
                break
            if cmd == "settings":
                client.until(lambda: client.settings is not None)
                out = {"enableConnectProtocol": client.settings.get(int(h2.settings.SettingCodes.ENABLE_CONNECT_PROTOCOL))}
            elif cmd == "open":
                headers = [(":method", "CONNECT"), (":protocol", "websocket"), (":scheme", "http"),
                           (":path", args[1]), (":authority", authority), ("sec-websocket-version", "13")]
                headers += [tuple(f.split("=", 1)) for f in args[2:]]
                out = client.request(args[0], headers)
            elif cmd in ("connect", "raw"):
                # as written, unchecked by h2: it insists on :path, which RFC 9113 section 8.5 forbids a CONNECT
                fields = [(":method", "CONNECT"), (":authority", args[1])] if cmd == "connect" \
                    else [tuple(f.split("=", 1)) for f in args[1:]]
                client.conn.config.validate_outbound_headers = False
                try:
                    out = client.request(args[0], fields)
                finally:
                    client.conn.config.validate_outbound_headers = True
            elif cmd == "text":
                st = client.streams[args[0]]
                client.send(st, frame(0x1, " ".join(args[1:]).encode("utf-8")))
                opcode, payload = client.message(st)
                out = {"stream": args[0], "opcode": opcode, "text": payload.decode("utf-8")}
            elif cmd == "binary":
                st = client.streams[args[0]]
                data = os.urandom(int(args[1]))
                client.send(st, frame(0x2, data))
                opcode, payload = client.message(st)
                out = {"stream": args[0], "opcode": opcode, "length": len(payload), "same": payload == data}
            elif cmd == "close":
                st = client.streams[args[0]]
                client.send(st, frame(0x8, struct.pack("!H", 1000)))
                opcode, payload = client.message(st)
                code = struct.unpack("!H", payload[:2])[0] if opcode == 0x8 and len(payload) >= 2 else None
                out = client.end(args[0])
                out.update({"opcode": opcode, "close": code})
            elif cmd == "end":
                st = client.streams[args[0]]
                client.conn.end_stream(st.id)
                client.flush()
                out = client.end(args[0])
            elif cmd == "wait":
                out = client.end(args[0])
            elif cmd == "goaway":
                code, last = client.goaway if client.goaway else (None, None)
                out = {"goaway": code, "lastStreamId": last}
            else:
                out = {"error": "unknown command " + cmd}
        except Exception as e:  # answered, so that the test names what went wrong
            out = {"error": "%s: %s" % (type(e).__name__, e)}
        print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
