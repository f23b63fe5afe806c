# The board side of micronn_tools.board (put/get/sha256 and friends): MicroPython code, one class
# so that it binds a single global, `_mn`, in the REPL. The test firmware freezes this file
# (port/manifest.py): the host then imports it in one short exec after each reset; on any other
# firmware, or when V differs from the host's copy, the host pastes this source instead. V is the
# sha256 of this file with V's value left empty (tests/cli/test_stream_codec.py checks it;
# board.helper_id() computes it). Runs on boards without binascii (repr/literal_eval fallback).
class _mn:
    V = 'c37d92f8c764'
    import hashlib, os
    try:
        import binascii
        a2b = binascii.a2b_base64
        b2a = binascii.b2a_base64
    except ImportError:
        a2b = b2a = None
    f = None      # the file an unfinished put writes

    def sha(p, quiet=False):
        h = _mn.hashlib.sha256()
        b = bytearray(2048)
        m = memoryview(b)
        z = 0
        with open(p, 'rb') as f:
            while True:
                n = f.readinto(b)
                if not n:
                    break
                h.update(m[:n])
                z += n
        r = '%d %s' % (z, ''.join('%02x' % x for x in h.digest()))
        if quiet:
            return r
        print(r)

    def clean(t, d=None):
        # A handle left open by an interrupted transfer would be flushed whenever it is finalised
        # (gc, soft reset) and overwrite what a later transfer wrote: close it, then let gc
        # finalise any other unreachable file, then drop the half-written temporary file.
        try:
            _mn.f.close()
        except Exception:
            pass
        _mn.f = None
        import gc
        gc.collect()
        try:
            _mn.os.remove(t)
        except OSError:
            pass
        # with d: also the temporary files that interrupted copies (a dead link, a killed host)
        # left in directory d and the directories in it
        s = [(d, 2)] if d else []
        while s:
            q, k = s.pop()
            try:
                es = [(e[0], e[1]) for e in _mn.os.ilistdir(q)]
            except Exception:
                continue
            for n, y in es:
                p = q.rstrip('/') + '/' + n
                if y == 0x4000:
                    if k > 1 and p != '/rom':
                        s.append((p, k - 1))
                elif n.endswith('.mn-tmp'):
                    try:
                        _mn.os.remove(p)
                    except OSError:
                        pass

    def prep(t, d):
        # before a put: clean(t, d), then the block size and free bytes of d's filesystem
        _mn.clean(t, d)
        try:
            s = _mn.os.statvfs(d)
            print(s[0], s[0] * s[4])
        except OSError:
            print(0, -1)

    def mv(t, p):
        try:
            _mn.os.rename(t, p)
        except OSError:
            _mn.os.remove(p)  # FAT cannot rename over an existing file
            _mn.os.rename(t, p)

    def commit(t, p, w):
        # after a put: t's size and sha256; only when they are w ('size hex'), t becomes p, whose
        # size and sha256 follow
        a = _mn.sha(t, True)
        print(a)
        if a == w:
            _mn.mv(t, p)
            _mn.sha(p)

    def open(p):
        _mn.f = open(p, 'wb')

    def write(d):
        n = _mn.f.write(d)
        if n != len(d):
            raise OSError('short write: %d of %d bytes' % (n, len(d)))

    def close():
        _mn.f.close()
        _mn.f = None

    def recv(p, n, c):
        # n escaped bytes follow on stdin (see board._escape), decoded in blocks of about c and
        # written to file p, or with p None to the ROMFS region from its start (rom_ioctl write)
        import sys
        r = sys.stdin.buffer
        b = bytearray(c + 1)
        m = memoryview(b)
        o = 0
        x = None
        if p is None:
            import vfs
        else:
            _mn.f = open(p, 'wb')
        while n:
            k = min(n, c)
            r.readinto(m[:k])
            if b[k - 1] == 27:  # an escape pair split by the block end
                r.readinto(m[k:k + 1])
                k += 1
            n -= k
            if x:
                continue  # keep reading: what the host still sends must not reach the REPL
            d = bytes(m[:k])
            if b'\x1b' in d:
                for i in (1, 2, 3, 4, 5, 0):  # ESC '@' stands for ESC itself: decoded last
                    d = d.replace(bytes((27, 64 + i)), bytes((i or 27,)))
            try:
                if p is None:
                    e = vfs.rom_ioctl(4, 0, o, d)
                    if e < 0:
                        raise OSError(-e)
                    o += len(d)
                elif _mn.f.write(d) != len(d):
                    raise OSError('short write')
            except OSError as e:
                x = e
        if p is not None:
            _mn.close()
        if x:
            raise x

    def dump(p, c):
        with open(p, 'rb') as f:
            while True:
                d = f.read(c)
                if not d:
                    break
                print(_mn.b2a(d).decode().strip() if _mn.b2a else repr(d))
