"""WebSocket echo server and load client for gateway-ws-load.sh (python3-websockets, 10.x).

  ws_echo.py serve PORT                 echo every message back, until killed
  ws_echo.py load URL SECONDS CONNS SIZE
      CONNS connections to URL, each sending a binary message of SIZE bytes and awaiting its echo,
      again and again, for SECONDS; prints "messages bytes seconds p50_ms p99_ms" (bytes one way)

Each connection has one message in flight, so the figures measure round trips through the path
(the direct upstream, Headroom, or nginx) rather than how much a socket can buffer.
"""
import asyncio
import os
import sys
import time

import websockets


async def serve(port):
    async def echo(ws, path=None):
        async for message in ws:
            await ws.send(message)

    async with websockets.serve(echo, "127.0.0.1", port, max_size=None, compression=None):
        await asyncio.Future()


async def load(url, seconds, conns, size):
    payload = os.urandom(size)
    stop = time.monotonic() + seconds
    latencies = []

    async def one():
        async with websockets.connect(url, max_size=None, compression=None) as ws:
            while time.monotonic() < stop:
                t0 = time.perf_counter()
                await ws.send(payload)
                echoed = await ws.recv()
                latencies.append(time.perf_counter() - t0)
                if len(echoed) != size:
                    raise RuntimeError("echo of %d bytes for %d" % (len(echoed), size))

    t0 = time.monotonic()
    await asyncio.gather(*(one() for _ in range(conns)))
    took = time.monotonic() - t0
    latencies.sort()
    n = len(latencies)
    p50 = latencies[n // 2] * 1000 if n else 0
    p99 = latencies[min(n - 1, int(n * 0.99))] * 1000 if n else 0
    print("%d %d %.3f %.3f %.3f" % (n, n * size, took, p50, p99))


if __name__ == "__main__":
    if sys.argv[1] == "serve":
        asyncio.run(serve(int(sys.argv[2])))
    else:
        asyncio.run(load(sys.argv[2], float(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])))
