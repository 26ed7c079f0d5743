# MCP Gate's network shim for Python (issue 44), beside the Node one (net-shim.ts). Copied to
# dist/netshim/mcp_gate_netshim.py by scripts/build.mjs; a sandbox with a network door shows it read-only at
# /run/mcp-gate/net-shim.py and the load guard (which is in every Python process of a guarded server) runs it
# first when MCP_GATE_DOOR is set.
#
# A contained server's only way out is the door, a TCP listener on the sandbox's own loopback behind which MCP Gate's
# filtering proxy takes `CONNECT host:port`. Python clients that honour HTTP(S)_PROXY (urllib, requests, httpx)
# reach it by themselves; raw TCP clients (database drivers written in Python: asyncpg, pymysql, redis-py; aiohttp,
# which ignores the proxy variables by default) connect straight to the host, and there is no DNS in the sandbox.
# This shim carries them through the door:
#   - socket.getaddrinfo    a name that is not loopback resolves to a stand-in address (240.77.0.0/16, reserved,
#                           never routed) remembered with the name, so the door is asked for the name itself
#                           and decides it by your rules (a name resolved here could not be checked).
#   - socket.socket.connect (and connect_ex) a TCP connection to an address that is not loopback goes to the door,
#                           which is asked `CONNECT host:port`; connect returns once the proxy answered 200 (a
#                           non-blocking socket is made blocking for that handshake, then given back its mode:
#                           asyncio takes the connection as made at once). A refusal is ConnectionRefusedError with
#                           the proxy's status line and body, which names the rule that would allow the host.
# Loopback (127.0.0.0/8, ::1, localhost) is never tunnelled: the door itself and a client's own proxy setting lead
# there. Not carried: UDP, C extensions that open sockets themselves (libpq's psycopg2, grpcio), and a child
# process that is not Python or Node. Standard library only; nothing else of MCP Gate.
import errno as _errno
import os as _os
import socket as _socket
import threading as _threading

_DOOR = _os.environ.get('MCP_GATE_DOOR', '')
_MARK = '_mcp_gate_netshim'
_STANDIN = (240, 77)                 # 240.77.x.y: reserved (240.0.0.0/4), never routed
_HANDSHAKE_TIMEOUT = 30.0
_MAX_HEAD = 16 * 1024


def _door():
    host, _, port = _DOOR.rpartition(':')
    host = host.strip('[]')
    try:
        return host, int(port)
    except ValueError:
        return None


def _loopback(host):
    h = host.lower() if isinstance(host, str) else host
    return h in ('localhost', 'localhost.', '::1', '0.0.0.0', '::') or (isinstance(h, str) and h.startswith('127.'))


def _is_address(host):
    for fam in (_socket.AF_INET, _socket.AF_INET6):
        try:
            _socket.inet_pton(fam, host)
            return True
        except (OSError, ValueError, TypeError):
            pass
    return False


def install():
    door = _door()
    if door is None or getattr(_socket, _MARK, False):
        return False
    setattr(_socket, _MARK, True)
    lock = _threading.Lock()
    names = {}                       # stand-in address -> name
    standins = {}                    # name -> stand-in address
    real_getaddrinfo = _socket.getaddrinfo
    real_connect = _socket.socket.connect
    real_connect_ex = _socket.socket.connect_ex

    def standin(name):
        with lock:
            a = standins.get(name)
            if a is None:
                n = len(standins) + 1
                if n >= 65534:
                    raise _socket.gaierror(_socket.EAI_AGAIN, 'MCP Gate: too many names in this process')
                a = '%d.%d.%d.%d' % (_STANDIN[0], _STANDIN[1], n >> 8, n & 255)
                standins[name], names[a] = a, name
            return a

    def getaddrinfo(host, port, family=0, type=0, proto=0, flags=0):
        if host is None or not isinstance(host, (str, bytes)):
            return real_getaddrinfo(host, port, family, type, proto, flags)
        h = host.decode('idna') if isinstance(host, bytes) else host
        if _loopback(h) or _is_address(h) or family == _socket.AF_UNIX:
            return real_getaddrinfo(host, port, family, type, proto, flags)
        if family not in (0, _socket.AF_UNSPEC, _socket.AF_INET):
            raise _socket.gaierror(_socket.EAI_FAMILY, 'MCP Gate carries names through its door as IPv4 stand-ins')
        a = standin(h.rstrip('.').lower())
        if isinstance(port, str):
            try:
                port = int(port)
            except ValueError:
                port = _socket.getservbyname(port)
        socktypes = [type] if type else [_socket.SOCK_STREAM, _socket.SOCK_DGRAM]
        out = []
        for st in socktypes:
            pr = proto or (_socket.IPPROTO_TCP if st == _socket.SOCK_STREAM else _socket.IPPROTO_UDP)
            out.append((_socket.AF_INET, st, pr, h if flags & _socket.AI_CANONNAME else '', (a, port or 0)))
        return out

    def tunnel(sock, address):
        """The CONNECT handshake on `sock`, connected to the door; None when this connection is not tunnelled."""
        if sock.family not in (_socket.AF_INET, _socket.AF_INET6) or not (sock.type & _socket.SOCK_STREAM):
            return None
        if not isinstance(address, tuple) or len(address) < 2:
            return None
        host, port = address[0], address[1]
        if not isinstance(host, str) or _loopback(host):
            return None
        target = names.get(host, host)
        authority = '[%s]:%d' % (target, port) if ':' in target else '%s:%d' % (target, port)
        timeout = sock.gettimeout()
        sock.settimeout(_HANDSHAKE_TIMEOUT if timeout is None or timeout == 0 else timeout)
        try:
            if sock.family == _socket.AF_INET6:
                real_connect(sock, ('::ffff:' + door[0], door[1]) if '.' in door[0] else door)
            else:
                real_connect(sock, door)
            sock.sendall(('CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n' % (authority, authority)).encode('ascii'))
            head = b''
            while not head.endswith(b'\r\n\r\n'):       # byte by byte: what the host sends after the 200 stays unread
                b = sock.recv(1)
                if not b:
                    break
                head += b
                if len(head) > _MAX_HEAD:
                    break
            status = head.split(b'\r\n', 1)[0].decode('latin-1')
            parts = status.split(' ')
            if len(parts) < 2 or parts[1] != '200':
                body = b''
                try:
                    sock.settimeout(2.0)
                    body = sock.recv(_MAX_HEAD)
                except OSError:
                    pass
                raise ConnectionRefusedError(_errno.ECONNREFUSED, 'MCP Gate refused %s: %s %s' % (
                    authority, status or 'no answer from the door', body.decode('utf-8', 'replace').strip()))
        finally:
            sock.settimeout(timeout)
        return True

    def connect(self, address):
        if tunnel(self, address) is None:
            return real_connect(self, address)
        return None

    def connect_ex(self, address):
        try:
            if tunnel(self, address) is None:
                return real_connect_ex(self, address)
            return 0
        except OSError as e:
            return e.errno or _errno.ECONNREFUSED

    _socket.getaddrinfo = getaddrinfo
    _socket.socket.connect = connect
    _socket.socket.connect_ex = connect_ex
    return True
