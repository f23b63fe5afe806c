"""Generate mn_builtin.h / mn_opnames.c from the TFLite schema (Python object API).

Only enum values and names are taken from the schema; no flatbuffer code is generated. The
options-table names are kept only for the tables the linked kernels take (mn_ops.h), or all of
them in a build of every op.
Usage: python gen_builtins.py  (writes next to the engine sources)
"""
import os
import re
from ai_edge_litert import schema_py_generated as s

HERE = os.path.dirname(os.path.abspath(__file__))
ENGINE = os.path.dirname(HERE)


def members(cls):
    items = [(v, k) for k, v in vars(cls).items() if not k.startswith('_') and isinstance(v, int)]
    return sorted(items)


def kernel_options():
    """Options table name -> the ops in mn_ops.h whose kernels take it."""
    users = {}
    with open(os.path.join(ENGINE, 'mn_ops.h')) as f:
        for m in re.finditer(r'^MN_OP\((\w+), (\w+),', f.read(), re.M):
            users.setdefault(m.group(2), []).append(m.group(1))
    return users


def packed(names, keep_if=None):
    """C string literal lines: names[0], names[1], ... each NUL-terminated ("" where absent).
    keep_if: name -> preprocessor condition under which the name is kept (else ""), or None."""
    n = max(names) + 1
    # a name starting with an octal digit would extend the preceding \\0 escape
    assert all(not k[0].isdigit() for k in names.values())
    parts = [(names.get(i, ''), keep_if(names[i]) if keep_if and i in names else None) for i in range(n)]
    lines, line = [], ''
    for name, cond in parts:
        if cond:
            if line:
                lines.append('    "%s"' % line)
                line = ''
            lines += ['#if %s' % cond, '    "%s"' % name, '#endif', '    "\\0"']
            continue
        p = '%s\\0' % name
        if len(line) + len(p) > 92:
            lines.append('    "%s"' % line)
            line = ''
        line += p
    lines.append('    "%s";' % line if line else '    ;')
    return lines


def op_name_len():
    """MN_OP_NAME_LEN of micronn.h: the buffer mn_op_name decodes a name into."""
    with open(os.path.join(ENGINE, 'micronn.h')) as f:
        return int(re.search(r'^#define MN_OP_NAME_LEN (\d+)', f.read(), re.M).group(1))


def compress(names, max_words=128):
    """Substring dictionary for the op names (greedy, like ROM text compression): words (each
    used at least twice, taken where it saves most bytes) and each name as a list of literal
    characters (str) and word indices (int). Words do not refer to other words."""
    toks = [list(n) for n in names]
    words = []

    def flat(t):
        return ''.join(x if isinstance(x, str) else '\0' for x in t)
    while len(words) < max_words:
        upper = {}
        for t in toks:
            for run in flat(t).split('\0'):
                for a in range(len(run)):
                    for b in range(a + 2, len(run) + 1):
                        upper[run[a:b]] = upper.get(run[a:b], 0) + 1
        # upper bound of the gain from overlapping counts; the exact gain counts a name's
        # non-overlapping occurrences. A use costs 1 byte instead of len, the word len bytes.
        cands = sorted(upper, key=lambda w: (-(upper[w] * (len(w) - 1) - len(w)), -len(w), w))
        best, gain = None, 0
        for w in cands:
            if upper[w] * (len(w) - 1) - len(w) <= gain:
                break
            g = sum(flat(t).count(w) for t in toks) * (len(w) - 1) - len(w)
            if g > gain:
                best, gain = w, g
        if best is None:
            break
        k = len(words)
        words.append(best)
        new = []
        for t in toks:
            s = ''.join(x if isinstance(x, str) else chr(0xE000 + x) for x in t)
            out = []
            for i, part in enumerate(s.split(best)):
                if i:
                    out.append(k)
                out += [ord(c) - 0xE000 if ord(c) >= 0xE000 else c for c in part]
            new.append(out)
        toks = new
    assert all(''.join(x if isinstance(x, str) else words[x] for x in t) == n for t, n in zip(toks, names))
    return words, toks


def compressed_names(names):
    """C lines: mn_op_words (the dictionary, last character of each word | 0x80) and mn_op_names
    (one NUL-terminated byte string per code: ASCII characters, or 0x80 + k for word k)."""
    n = max(names) + 1
    full = [names.get(i, '') for i in range(n)]
    assert all(re.match(r'^[A-Z0-9_]*$', x) for x in full) and max(len(x) for x in full) < op_name_len()
    words, toks = compress(full)
    lines = ['static const uint8_t mn_op_words[] =']
    for k, w in enumerate(words):
        lines.append('    %-28s /* \\%03o */' % ('"%s\\%03o"' % (w[:-1], ord(w[-1]) | 0x80), 0x80 + k))
    lines[-1] = lines[-1].replace('" ', '";', 1)
    lines.append('#define MN_N_OP_NAMES %d' % n)
    lines.append('static const uint8_t mn_op_names[] =')
    for i, t in enumerate(toks):
        enc = ''.join(x if isinstance(x, str) else '\\%03o' % (0x80 + x) for x in t)
        lines.append('    %-28s /* %d %s */' % ('"%s\\0"' % enc, i, full[i]))
    lines[-1] = lines[-1].replace('" ', '";', 1)
    return lines


def main():
    ops = members(s.BuiltinOperator)
    opts = members(s.BuiltinOptions)
    types = members(s.TensorType)
    h = ['/* Generated by tools/gen_builtins.py from the TFLite schema. Do not edit. */',
         '#ifndef MN_BUILTIN_H', '#define MN_BUILTIN_H', '',
         '/* BuiltinOperator codes (schema enum values). */', 'enum mn_builtin {']
    h += ['    MN_BUILTIN_%s = %d,' % (k, v) for v, k in ops]
    h += ['};', '#define MN_BUILTIN_MAX %d' % max(v for v, _ in ops), '',
          '/* BuiltinOptions union type codes (Operator.builtin_options_type). */', 'enum mn_options_type {']
    h += ['    MN_OPTIONS_%s = %d,' % (k, v) for v, k in opts]
    h += ['};', '', '#endif', '']
    with open(os.path.join(ENGINE, 'mn_builtin.h'), 'w') as f:
        f.write('\n'.join(h))
    c = ['/* Generated by tools/gen_builtins.py from the TFLite schema. Do not edit. */',
         '#include "micronn.h"', '#include "mn_builtin.h"', '',
         '#if MICRONN_OP_NAMES',
         '/* Names of builtin operators, compressed (about 1.5 KB instead of 2.6 KB): a dictionary of',
         ' * substrings that recur (STABLEHLO_, REDUCE_, _POOL_2D, ...), each stored with its last',
         ' * character | 0x80, and per op code one NUL-terminated byte string ("" for a code without a',
         ' * name) of ASCII characters and bytes 0x80 + k standing for word k. Every name is there, also',
         ' * of ops without a kernel in this build (the "unsupported op" error names them). */',
         ]
    c += compressed_names(dict((v, k) for v, k in ops))
    c += ['',
          '/* Names of builtin options tables: one string of NUL-terminated names in code order ("" for',
          ' * a code without one). An op-selected build keeps only the names of the options tables its',
          ' * kernels take ("" for the others). */',
          '#define MN_N_OPTIONS_NAMES %d' % (max(v for v, _ in opts) + 1),
          'static const char mn_options_names[] =']
    users = kernel_options()

    def options_kept(name):
        """Kept with every op or with an op taking it; NONE always."""
        if name == 'NONE':
            return None
        return ' || '.join(['MICRONN_OPS_ALL'] + ['MICRONN_OP_%s' % op for op in users.get(name, [])])
    c += packed(dict((v, k) for v, k in opts), options_kept)
    c += ['',
          '/* Name i of a packed table (i < its count). */',
          'static const char *nth_name(const char *names, int32_t i) {',
          '    while (i-- > 0) {', '        names += strlen(names) + 1;', '    }', '    return names;', '}', '',
          '/* Name of op code i (i < MN_N_OP_NAMES) into buf, which the generator checked is large enough. */',
          'static const char *op_name(int32_t i, char *buf) {',
          '    const uint8_t *p = mn_op_names;',
          '    while (i-- > 0) {',
          '        p += strlen((const char *)p) + 1;',
          '    }',
          '    char *out = buf;',
          '    for (; *p; p++) {',
          '        if (*p < 0x80) {',
          '            *out++ = (char)*p;',
          '            continue;',
          '        }',
          '        const uint8_t *w = mn_op_words;',
          '        for (int k = *p - 0x80; k > 0; k--) {',
          '            while (*w++ < 0x80) {',
          '            }',
          '        }',
          '        do {',
          '            *out++ = (char)(*w & 0x7f);',
          '        } while (*w++ < 0x80);',
          '    }',
          '    *out = 0;',
          '    return buf;',
          '}',
          '#endif', '',
          'const char *mn_op_name(int32_t builtin, char *buf) {',
          '    if (builtin == MN_BUILTIN_CUSTOM) {', '        return "CUSTOM";', '    }',
          '#if MICRONN_OP_NAMES',
          '    if (builtin >= 0 && builtin < MN_N_OP_NAMES && *op_name(builtin, buf)) {',
          '        return buf;', '    }',
          '#else', '    (void)buf;',
          '#endif', '    return "?";', '}', '',
          'const char *mn_dtype_name(int32_t dtype) {',
          '    switch (dtype) {']
    c += ['        case %d: return "%s";' % (v, k.lower()) for v, k in types]
    c += ['        default: return "?";', '    }', '}', '',
          'const char *mn_options_name(int32_t options_type) {',
          '#if MICRONN_OP_NAMES',
          '    if (options_type >= 0 && options_type < MN_N_OPTIONS_NAMES) {',
          '        const char *name = nth_name(mn_options_names, options_type);',
          '        if (*name) {', '            return name;', '        }', '    }', '#endif',
          '    return options_type == 0 ? "NONE" : "?";   /* "?": not a table a linked kernel takes */', '}', '']
    with open(os.path.join(ENGINE, 'mn_opnames.c'), 'w') as f:
        f.write('\n'.join(c))


if __name__ == '__main__':
    main()
