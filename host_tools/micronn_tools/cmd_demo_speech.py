"""`micronn demo speech`: micro_speech from raw audio on the default emulated board (what
`make demo-speech` runs). The board does all of it: micronn.audio.Speech (py_lib/micronn/audio.py)
reads each .wav, feeds its samples 320 at a time (20 ms) to TFLM's audio front end
(audio_preprocessor_int8: each 30 ms window, 20 ms apart, to 40 int8 features) and scores the
last 49 frames with micro_speech_quantized, both in one micronn.Arena."""
import os
import wave

import ast

from .cli_common import CliError, board_spec, check_firmware_ops, ensure_model, open_target, put_verified, \
    say, verify_model

#: TFLM's scores [silence, unknown, yes, no] for the shared clips (shared/models/README.md).
EXPECTED = {"yes_1000ms": [-128, -128, 127, -128], "no_1000ms": [-128, -114, -128, 114],
            "silence_1000ms": [-42, -68, -68, -78], "noise_1000ms": [120, -125, -126, -125]}
EXPECTED_LABEL = {"yes_1000ms": "yes", "no_1000ms": "no", "silence_1000ms": "silence",
                  "noise_1000ms": "silence"}
FRONTEND = os.path.join("audio", "audio_preprocessor_int8.tflite")
CLASSIFIER = "micro_speech_quantized.tflite"
CHUNK = 320

DESCRIPTION = """\
Keyword spotting from raw 16 kHz audio on a board, as TFLM's micro_speech example does it: the
four shared 1000 ms clips (audio/{yes,no,silence,noise}_1000ms.wav) are copied to the board,
where micronn.audio.Speech feeds each one 320 samples (20 ms) at a time through TFLM's audio front
end (audio/audio_preprocessor_int8.tflite: every 30 ms window, 20 ms apart, to 40 int8 features)
and scores the last 49 feature frames with micro_speech_quantized.tflite ([silence, unknown, yes,
no]). Prints each clip's scores and label, the instructions of a 20 ms step (emulated boards;
microseconds on real ones) with the front end alone and with both models, and the bytes of the
Arena they share. The expected scores are TFLM's
(tflite-micro): yes -> [-128, -128, 127, -128], no -> [-128, -114, -128, 114], silence ->
[-42, -68, -68, -78], noise -> [120, -125, -126, -125] (silence). Exit status 1 when a score
differs. `make demo-speech` builds the firmware with both models built in and runs this.
"""

# Runs on the board: FE, CL (model sources for micronn.load) and CLIPS are prepended.
_DEVICE = """
import micronn, time
from micronn.audio import Speech, read_wav
sp = Speech(FE, CL)
res = []
for name in CLIPS:
    x = read_wav(name + '.wav')
    sp.reset()
    i = 0
    step = fe = 0
    while i < len(x):
        e = min(i + CHUNK, len(x))
        t0 = CLOCK()
        ran = sp.feed(x, i, e)
        t = time.ticks_diff(CLOCK(), t0)
        if ran:
            step = t
        elif sp.frames > 1:
            fe = t
        i = e
    res.append((name, list(sp.scores), sp.label(), sp.frames, sp.runs, step, fe))
print((res, sp.arena_size, sp.frontend.stats()['persistent'], sp.classifier.stats()['persistent']))
"""


def run_speech(args):
    from .board import BoardExecError
    from .cli_common import models_dir
    mdir = args.models_dir or models_dir()
    fe_path, cl_path = os.path.join(mdir, FRONTEND), os.path.join(mdir, CLASSIFIER)
    fe_data, fe_model = verify_model(fe_path)
    cl_data, cl_model = verify_model(cl_path)
    clips = {}
    for name in EXPECTED:
        path = os.path.join(mdir, "audio", name + ".wav")
        try:
            with wave.open(path) as w:
                fmt = (w.getframerate(), w.getsampwidth(), w.getnchannels())
        except FileNotFoundError:
            raise CliError(f"clip {path}: no such file") from None
        except (wave.Error, EOFError) as e:
            raise CliError(f"clip {path}: not a WAV file ({e})") from None
        if fmt != (16000, 2, 1):
            raise CliError(f"clip {path}: need 16 kHz mono 16-bit PCM, got {fmt[0]} Hz, "
                           f"{8 * fmt[1]} bits, {fmt[2]} channels")
        with open(path, "rb") as f:
            clips[name] = f.read()
    spec = board_spec(args)
    emulated = not args.port and spec is not None and spec.emulated
    board = open_target(args, spec)
    try:
        check_firmware_ops(board, fe_model, args.timeout)
        check_firmware_ops(board, cl_model, args.timeout)
        fe_src, fe_where = ensure_model(board, fe_data, fe_path, args)
        cl_src, cl_where = ensure_model(board, cl_data, cl_path, args)
        for name, data in clips.items():
            put_verified(board, data, name + ".wav", args, label=f"copy clip {name}.wav")
        code = (f"import time\nFE, CL, CLIPS, CHUNK = {fe_src}, {cl_src}, {list(clips)!r}, {CHUNK}\n"
                f"CLOCK = time.{'ticks_cpu' if emulated else 'ticks_us'}\n" + _DEVICE)
        say("running the clips on the board", args.quiet)
        try:
            out = board.exec(code, timeout=max(args.timeout or 0, 600))
        except BoardExecError as e:
            if e.exc_type in ("NotImplementedError", "MemoryError", "ValueError", "OSError"):
                raise CliError(f"{board.name}: {e.traceback.strip().splitlines()[-1]}") from None
            raise
        try:
            res, arena, fe_pers, cl_pers = ast.literal_eval(out.strip().splitlines()[-1])
        except (ValueError, SyntaxError, IndexError):
            raise CliError(f"cannot parse what the board printed: {out[-500:]!r}") from None
    finally:
        board.close()
    desc = f"{spec.name} ({spec.core}, emulated)" if emulated else (args.port + (f" ({spec.name})" if spec else ""))
    print(f"micro_speech from raw audio on {desc}: {CHUNK} samples (20 ms) per feed")
    print(f"  front end: {fe_where}; classifier: {cl_where}")
    ok = True
    step = fe = 0
    for name, scores, label, frames, runs, ticks, fe_ticks in res:
        exp = EXPECTED[name]
        good = scores == exp and label == EXPECTED_LABEL[name]
        ok &= good
        step = max(step, ticks)
        fe = max(fe, fe_ticks)
        print(f"  {name + '.wav':<19} {frames} frames, scores [silence, unknown, yes, no] = "
              f"{scores}  -> {label:<7} (expected {exp}: {'ok' if good else 'MISMATCH'})")
    if emulated and spec.instructions_per_tick:
        unit, conv = "instructions", spec.instructions
    else:
        unit, conv = ("CPU ticks" if emulated else "microseconds"), int
    print(f"  {unit} per 20 ms step (feed of 320 samples, Python included): front end "
          f"{conv(fe):,}; front end + classifier {conv(step):,}")
    print(f"  shared arena: {arena:,} bytes (persistent: front end {fe_pers:,}, classifier {cl_pers:,})")
    if not ok:
        raise CliError("the scores differ from TFLM's (shared/models/README.md)")
    say("demo ok", args.quiet)
    return 0
