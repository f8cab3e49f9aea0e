"""Random Example / SequenceExample records built at the wire level, canonical or not.

A record is first drawn as a small tree (features, kinds, values), then written byte by byte
with encoding choices the protobuf library itself never makes: unpacked and split packed
lists, unknown fields, repeated map keys, map entries value-first, sections out of order.
Everything is drawn from the ``random.Random`` passed in, so a (seed, case) pair gives the
same bytes on every run.
"""

import struct

INT64_EXTREMES = [0, 1, -1, 2**63 - 1, -(2**63), 2**31, -(2**31) - 1, 127, 128, 300]
FLOAT_SPECIALS = [0.0, -0.0, 1.0, -1.5, float("nan"), float("inf"), float("-inf"), 1e-45, 3.4028234663852886e38]
BYTES_SPECIALS = [b"", b"a", b"\xff\xfe", b"\x80", "é".encode(), b"\x00", b"x" * 40]


def varint(n):
    n &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def tag(field, wire):
    return varint(field << 3 | wire)


def ld(field, payload):
    return tag(field, 2) + varint(len(payload)) + payload


def unknown_field(rng):
    """A field number no message here uses, of a random wire type (never a group)."""
    field = rng.choice([5, 7, 15, 100, 2047])
    wire = rng.choice([0, 1, 2, 5])
    if wire == 0:
        return tag(field, 0) + varint(rng.randrange(1 << 20))
    if wire == 1:
        return tag(field, 1) + bytes(rng.randrange(256) for _ in range(8))
    if wire == 5:
        return tag(field, 5) + bytes(rng.randrange(256) for _ in range(4))
    return ld(field, bytes(rng.randrange(256) for _ in range(rng.randrange(4))))


def draw_value(rng, kind):
    if kind == "int64":
        if rng.random() < 0.35:
            return rng.choice(INT64_EXTREMES)
        return rng.randrange(-2, 6)
    if kind == "float":
        if rng.random() < 0.35:
            return rng.choice(FLOAT_SPECIALS)
        return struct.unpack("<f", struct.pack("<f", rng.uniform(-10, 10)))[0]
    if rng.random() < 0.4:
        return rng.choice(BYTES_SPECIALS)
    return bytes(rng.choice(b"abcxyz") for _ in range(rng.randrange(4)))


def encode_list(rng, kind, values, canonical):
    """The bytes of an Int64List / FloatList / BytesList holding ``values``."""
    if kind == "bytes":
        body = b"".join(ld(1, v) for v in values)
    else:
        elem = (lambda v: varint(v)) if kind == "int64" else (lambda v: struct.pack("<f", v))
        wire = 0 if kind == "int64" else 5
        style = "packed" if canonical else rng.choice(["packed", "unpacked", "split", "mixed"])
        if not values:
            style = "packed" if canonical or rng.random() < 0.5 else "none"
        if style == "packed":
            body = ld(1, b"".join(elem(v) for v in values)) if values or canonical else b""
        elif style == "none":
            body = b""
        elif style == "unpacked":
            body = b"".join(tag(1, wire) + elem(v) for v in values)
        elif style == "split":
            cut = rng.randrange(len(values) + 1)
            body = ld(1, b"".join(elem(v) for v in values[:cut])) + ld(1, b"".join(elem(v) for v in values[cut:]))
        else:
            cut = rng.randrange(len(values) + 1)
            body = ld(1, b"".join(elem(v) for v in values[:cut])) + b"".join(tag(1, wire) + elem(v) for v in values[cut:])
    if not canonical and rng.random() < 0.1:
        body += unknown_field(rng)
    return body


KIND_FIELD = {"bytes": 1, "float": 2, "int64": 3}


def encode_feature(rng, feature, canonical):
    """``feature`` is (kind, values), or None for a Feature with no kind set."""
    if feature is None:
        return b"" if canonical or rng.random() < 0.7 else unknown_field(rng)
    kind, values = feature
    body = ld(KIND_FIELD[kind], encode_list(rng, kind, values, canonical))
    if not canonical and rng.random() < 0.05:
        # A oneof set twice: the last one wins in protobuf.
        other = rng.choice([k for k in KIND_FIELD if k != kind])
        body = ld(KIND_FIELD[other], encode_list(rng, other, [], True)) + body
    return body


def encode_map(rng, entries, encode_value, canonical):
    """A map field (field 1) of ``entries`` [(key, value)], maybe with repeated keys and
    value-first entries."""
    out = b""
    items = list(entries)
    if not canonical and items and rng.random() < 0.15:
        # A repeated key: an earlier entry the later one replaces.
        key, _ = rng.choice(items)
        items.insert(0, (key, None))
    for key, value in items:
        k = ld(1, key.encode())
        v = ld(2, encode_value(value))
        entry = k + v
        if not canonical:
            r = rng.random()
            # (No unknown fields inside an entry: the protobuf library TF ships (upb) keeps
            # such an entry aside as an unknown field, so no lenient answer could be had.)
            if r < 0.08:
                entry = v + k
        out += ld(1, entry)
    if not canonical and rng.random() < 0.05:
        out += unknown_field(rng)
    return out


def encode_features(rng, features, canonical):
    return encode_map(rng, features.items(), lambda f: encode_feature(rng, f, canonical), canonical)


def encode_example(rng, features, canonical):
    body = encode_features(rng, features, canonical)
    if canonical:
        return ld(1, body) if features or rng.random() < 0.5 else b""
    out = ld(1, body)
    r = rng.random()
    if r < 0.1:
        # Features split over two fields: merged.
        items = list(features.items())
        cut = rng.randrange(len(items) + 1)
        out = ld(1, encode_features(rng, dict(items[:cut]), canonical)) + ld(
            1, encode_features(rng, dict(items[cut:]), canonical)
        )
    elif r < 0.2:
        out = unknown_field(rng) + out
    return out


def encode_feature_list(rng, rows, canonical):
    out = b""
    for row in rows:
        out += ld(1, encode_feature(rng, row, canonical))
    if not canonical and rng.random() < 0.05:
        out += unknown_field(rng)
    return out


def encode_sequence_example(rng, context, lists, canonical):
    ctx = ld(1, encode_features(rng, context, canonical)) if context or rng.random() < 0.5 else b""
    fl_body = encode_map(rng, lists.items(), lambda rows: encode_feature_list(rng, rows or [], canonical), canonical)
    fl = ld(2, fl_body) if lists or rng.random() < 0.5 else b""
    if not canonical and rng.random() < 0.15:
        return fl + ctx
    return ctx + fl
