"""Record files for the statistics report tests: a data set of numeric, string and image
features, and a shifted copy of it (the evaluation data of a train/eval comparison)."""

import struct
import zlib

import tfrec


def png(width, height, seed):
    """A small RGB PNG: a gradient that depends on ``seed``."""
    raw = b"".join(
        b"\x00" + b"".join(bytes(((x * 255) // width, (y * 255) // height, (seed * 67) % 256)) for x in range(width))
        for y in range(height)
    )

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
        + chunk(b"IDAT", zlib.compress(raw))
        + chunk(b"IEND", b"")
    )


WORDS = ["cat", "dog", "fox", "owl", "emu", "yak", "elk", "ant"]


def rows(count, numeric, strings, shift=0.0):
    """``count`` Examples with ``numeric`` numeric features (``num_XX``; every third an int),
    ``strings`` string features (``cat_XX``; the first holds PNG images) and ``shift`` moving
    the numbers and the mix of words."""
    out = []
    for r in range(count):
        row = {}
        for i in range(numeric):
            if i % 3 == 2:
                row[f"num_{i:02d}"] = [int((r * (i + 1)) % 23 + shift * 4)]
            else:
                row[f"num_{i:02d}"] = [float(((r * 7919 + i * 31) % 101) / 10.0 * (i + 1) + shift * (i + 1))]
            if i % 7 == 6 and r % 5 == 0:
                del row[f"num_{i:02d}"]  # missing in some examples
        for i in range(strings):
            if i == 0:
                row["cat_00"] = [png(16, 16, r % 5)]
                continue
            pool = WORDS[: 3 + i % 6]
            k = (r * (i + 2) + int(shift * 3) * (r % 2)) % len(pool)
            row[f"cat_{i:02d}"] = [pool[k].encode()]
        out.append(row)
    return out


def write(path, examples):
    with tfrec.TFRecordWriter(str(path)) as w:
        for row in examples:
            w.write(tfrec.train.Example.from_dict(row).SerializeToString())
    return path


def feature_names(numeric, strings):
    return [f"num_{i:02d}" for i in range(numeric)] + [f"cat_{i:02d}" for i in range(strings)]
