"""micronn.audio: keyword spotting from raw 16 kHz int16 samples, as TFLM's micro_speech does it.

    from micronn.audio import Speech
    s = Speech()                      # audio_preprocessor_int8 + micro_speech_quantized, one Arena
    s.feed(samples)                   # int16 samples, any number per call (array('h'), ...)
    if s.ready:
        print(s.label(), list(s.scores))

The front end (a model: 30 ms window -> 40 int8 log-mel features) runs on every complete window
of 480 samples, stepped by 320 samples (20 ms; the last 160 samples are kept for the next
window). Each window's 40 features go into a ring of the last 49 frames; once 49 frames exist the
classifier scores them on every new frame, i.e. every 20 ms of audio. After construction feed()
allocates nothing (it works under micropython.heap_lock()).
"""
from array import array

import micronn

WINDOW = 480          # samples per front-end window (30 ms at 16 kHz)
STEP = 320            # samples between windows (20 ms)
KEEP = WINDOW - STEP  # overlap carried to the next window (10 ms)
LABELS = ("silence", "unknown", "yes", "no")


def _model(source):
    # A built-in name, a path, or a buffer; "name" also finds the file "name.tflite".
    if isinstance(source, str) and source not in micronn.models and "." not in source:
        try:
            return micronn.load(source)
        except ValueError:
            return micronn.load(source + ".tflite")
    return micronn.load(source)


class Speech:
    """Streaming keyword spotter: a front-end Interpreter (one window -> one feature frame) and a
    classifier Interpreter (``frames`` frames -> scores) sharing one micronn.Arena.

    frontend, classifier: models (built-in names, paths or buffers; see micronn.load).
    labels: the classifier's class names. on_scores: called as on_scores(self) after every
    classifier run (feed() may run it several times when given more than 20 ms of samples).
    arena: an Arena to use instead of a new one of micronn.arena_size(frontend, classifier)."""

    def __init__(self, frontend="audio_preprocessor_int8", classifier="micro_speech_quantized",
                 labels=LABELS, on_scores=None, arena=None):
        fm, cm = _model(frontend), _model(classifier)
        self.arena_size = micronn.arena_size(fm, cm)   # bytes both need in one Arena
        if arena is None:
            arena = micronn.Arena(self.arena_size)
        self.arena = arena
        self.frontend = micronn.Interpreter(fm, arena=arena)
        self.classifier = micronn.Interpreter(cm, arena=arena)
        fi, fo = self.frontend.input(0), self.frontend.output(0)
        ci, co = self.classifier.input(0), self.classifier.output(0)
        if fi.dtype != "int16" or len(fi) != WINDOW:
            raise ValueError("front end: need an int16 input of %d samples, got %s %s"
                             % (WINDOW, fi.dtype, fi.shape))
        width = len(fo)
        if fo.itemsize != ci.itemsize or fo.dtype != ci.dtype or len(ci) % width:
            raise ValueError("classifier input %s %s is not a stack of front-end frames %s %s"
                             % (ci.dtype, ci.shape, fo.dtype, fo.shape))
        n = len(ci) // width
        if len(labels) != len(co):
            raise ValueError("%d labels for %d scores" % (len(labels), len(co)))
        self.labels = labels
        self.on_scores = on_scores
        self.width = width                # features per frame (40)
        self.nframes = n                  # frames the classifier takes (49)
        self._fi, self._fo, self._ci, self._co = fi, fo, ci, co
        self._samples = array("h", bytes(2 * WINDOW))
        # Ring of frames, each written twice (slots k and k + n) so that the last n frames are
        # always one contiguous run: after writing slot k they are slots k + 1 .. k + n.
        fb = fo.itemsize * width
        ring = bytearray(2 * n * fb)
        mv = memoryview(ring)
        self._ring = ring
        self._slot = [mv[k * fb:(k + 1) * fb] for k in range(2 * n)]
        self._window = [mv[(k + 1) * fb:(k + 1 + n) * fb] for k in range(n)]
        self.scores = array(co.typecode, bytes(co.nbytes))   # the latest classifier output
        self.frame = self._slot[0]        # the latest front-end frame (a view into the ring)
        self.reset()

    def reset(self):
        """Start a new stream: no samples, no frames, the front end's state (noise estimate)
        back to its initial values."""
        self.frontend.reset()
        self.classifier.reset()
        self._n = 0                       # samples in the window buffer
        self._k = self.nframes - 1        # ring slot of the latest frame
        self.frames = 0                   # front-end frames since reset()
        self.runs = 0                     # classifier runs since reset()
        for i in range(len(self.scores)):
            self.scores[i] = 0

    @property
    def ready(self):
        """True once the classifier has scored a full stack of frames."""
        return self.runs > 0

    def feed(self, samples, start=0, stop=None):
        """Take int16 samples[start:stop] (an array('h'), a memoryview of typecode 'h', a list or
        tuple of ints; raw bytes are refused: wrap them as array('h', ...)). Runs the front end on
        each window completed and the classifier on each frame once there are enough. Returns the
        number of classifier runs done."""
        if type(samples) is bytes or type(samples) is bytearray:
            raise TypeError("samples must be int16 values (array('h')), not raw bytes")
        check = type(samples) is list or type(samples) is tuple
        if stop is None:
            stop = len(samples)
        if start < 0 or stop > len(samples) or start > stop:
            raise ValueError("bad sample range %d:%d of %d" % (start, stop, len(samples)))
        buf = self._samples
        n = self._n
        runs = 0
        i = start
        while i < stop:
            take = WINDOW - n
            if take > stop - i:
                take = stop - i
            end = i + take
            if check:
                for j in range(i, end):
                    v = samples[j]
                    if v < -32768 or v > 32767:
                        raise ValueError("sample %d out of int16 range" % v)
                    buf[n] = v
                    n += 1
            else:
                for j in range(i, end):
                    buf[n] = samples[j]
                    n += 1
            i = end
            if n == WINDOW:
                runs += self._window_done()
                for j in range(KEEP):
                    buf[j] = buf[j + STEP]
                n = KEEP
        self._n = n
        return runs

    def _window_done(self):
        self._fi.write(self._samples)
        self.frontend.invoke()
        k = self._k + 1
        if k == self.nframes:
            k = 0
        self._k = k
        self._fo.readinto(self._slot[k])
        self._fo.readinto(self._slot[k + self.nframes])
        self.frame = self._slot[k]
        self.frames += 1
        if self.frames < self.nframes:
            return 0
        self._ci.write(self._window[k])
        self.classifier.invoke()
        self._co.readinto(self.scores)
        self.runs += 1
        if self.on_scores is not None:
            self.on_scores(self)
        return 1

    def best(self):
        """Index of the highest score (the first on ties)."""
        s = self.scores
        b = 0
        for i in range(1, len(s)):
            if s[i] > s[b]:
                b = i
        return b

    def label(self):
        """Name of the highest-scoring class of the latest run."""
        return self.labels[self.best()]

    def classify(self, samples):
        """Scores of one clip from the start of a stream: reset(), feed(samples); a list."""
        self.reset()
        self.feed(samples)
        if not self.ready:
            raise ValueError("%d samples give %d frames; the classifier needs %d (%d samples)"
                             % (len(samples), self.frames, self.nframes,
                                WINDOW + STEP * (self.nframes - 1)))
        return list(self.scores)


def read_wav(path):
    """The samples of a 16 kHz mono int16 PCM .wav file: an array('h')."""
    with open(path, "rb") as f:
        head = f.read(12)
        if len(head) < 12 or head[:4] != b"RIFF" or head[8:12] != b"WAVE":
            raise ValueError("%s: not a RIFF/WAVE file" % path)
        fmt = None
        while True:
            h = f.read(8)
            if len(h) < 8:
                raise ValueError("%s: no data chunk" % path)
            size = int.from_bytes(h[4:8], "little")
            if h[:4] == b"fmt ":
                fmt = f.read(size)
                if size & 1:
                    f.read(1)
                continue
            if h[:4] == b"data":
                break
            f.read(size + (size & 1))
        if fmt is None or len(fmt) < 16:
            raise ValueError("%s: no fmt chunk before the data" % path)
        tag = int.from_bytes(fmt[0:2], "little")
        ch = int.from_bytes(fmt[2:4], "little")
        rate = int.from_bytes(fmt[4:8], "little")
        bits = int.from_bytes(fmt[14:16], "little")
        if (tag, ch, rate, bits) != (1, 1, 16000, 16):
            raise ValueError("%s: need 16 kHz mono 16-bit PCM, got format %d, %d channels, %d Hz, "
                             "%d bits" % (path, tag, ch, rate, bits))
        a = array("h", bytes(size & ~1))
        got = f.readinto(a)
        if got != len(a) * 2:
            raise ValueError("%s: data chunk truncated (%d of %d bytes)" % (path, got, size))
        return a
