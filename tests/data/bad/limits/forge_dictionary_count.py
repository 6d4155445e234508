"""Write tests/data/bad/limits/pq_table_dictionary_count_4e8.parquet (run from the repository root):

    python3 tests/data/bad/limits/forge_dictionary_count.py fuzz/corpus/column_parquet/gen_table_coo_f64_i64.parquet

The input is a Parquet table with a sparse tensor column, as arrow-sparse writes it
(column::io::write_batches: zstd, dictionary pages). The script sets the value count
of the first column chunk's dictionary page header to 4*10^8 (the issue #18 defect: a
982-byte file whose decoded dictionary took 1.58 GB) and keeps the file readable as far
as that page: the chunk's sizes and every later offset in the footer are moved by the
bytes the longer header takes, and the page index (whose page offsets would move too)
is dropped from the footer. Thrift compact protocol, written out here (no dependency).
"""
import struct
import sys

# --- Thrift compact protocol: a generic struct decoder / encoder -----------------------
STOP, TRUE, FALSE, BYTE, I16, I32, I64, DOUBLE, BINARY, LIST, SET, MAP, STRUCT = range(13)


def varint(b, i):
    shift = out = 0
    while True:
        x = b[i]
        i += 1
        out |= (x & 0x7F) << shift
        shift += 7
        if not x & 0x80:
            return out, i


def zz(n):
    return (n >> 1) ^ -(n & 1)


def put_varint(n):
    out = bytearray()
    while True:
        if n < 0x80:
            out.append(n)
            return bytes(out)
        out.append((n & 0x7F) | 0x80)
        n >>= 7


def put_zz(n):
    return put_varint((n << 1) ^ (n >> 63))


def value(t, b, i):
    if t in (TRUE, FALSE):
        return t == TRUE, i
    if t == BYTE:
        return b[i], i + 1
    if t in (I16, I32, I64):
        n, i = varint(b, i)
        return zz(n), i
    if t == DOUBLE:
        return b[i:i + 8], i + 8
    if t == BINARY:
        n, i = varint(b, i)
        return b[i:i + n], i + n
    if t in (LIST, SET):
        h = b[i]
        i += 1
        n, et = h >> 4, h & 0x0F
        if n == 15:
            n, i = varint(b, i)
        items = []
        for _ in range(n):
            if et in (TRUE, FALSE):  # list booleans: one byte each
                items.append(b[i] == 1)
                i += 1
            else:
                v, i = value(et, b, i)
                items.append(v)
        return (et, items), i
    if t == MAP:
        n, i = varint(b, i)
        if n == 0:
            return (0, 0, []), i
        kv = b[i]
        i += 1
        kt, vt = kv >> 4, kv & 0x0F
        items = []
        for _ in range(n):
            k, i = value(kt, b, i)
            v, i = value(vt, b, i)
            items.append((k, v))
        return (kt, vt, items), i
    if t == STRUCT:
        return struct_(b, i)
    raise ValueError(f"thrift type {t}")


def struct_(b, i):
    fields = []
    last = 0
    while True:
        h = b[i]
        i += 1
        if h == STOP:
            return fields, i
        t, delta = h & 0x0F, h >> 4
        if delta:
            fid = last + delta
        else:
            n, i = varint(b, i)
            fid = zz(n)
        last = fid
        v, i = value(t, b, i)
        fields.append([fid, t, v])


def enc_value(t, v):
    if t in (TRUE, FALSE):
        return b""
    if t == BYTE:
        return bytes([v])
    if t in (I16, I32, I64):
        return put_zz(v)
    if t == DOUBLE:
        return v
    if t == BINARY:
        return put_varint(len(v)) + v
    if t in (LIST, SET):
        et, items = v
        h = bytes([(len(items) << 4) | et]) if len(items) < 15 else bytes([0xF0 | et]) + put_varint(len(items))
        body = b"".join(bytes([1 if x else 2]) if et in (TRUE, FALSE) else enc_value(et, x) for x in items)
        return h + body
    if t == MAP:
        kt, vt, items = v
        if not items:
            return b"\x00"
        return put_varint(len(items)) + bytes([(kt << 4) | vt]) + b"".join(
            enc_value(kt, k) + enc_value(vt, x) for k, x in items)
    if t == STRUCT:
        return enc_struct(v)
    raise ValueError(t)


def enc_struct(fields):
    out = bytearray()
    last = 0
    for fid, t, v in fields:
        tt = (TRUE if v else FALSE) if t in (TRUE, FALSE) else t
        if 0 < fid - last <= 15:
            out.append(((fid - last) << 4) | tt)
        else:
            out.append(tt)
            out += put_zz(fid)
        last = fid
        out += enc_value(t, v)
    out.append(STOP)
    return bytes(out)


def field(fields, fid):
    for f in fields:
        if f[0] == fid:
            return f
    return None


# --- the forgery ------------------------------------------------------------------------
src, dst = sys.argv[1], (sys.argv[2] if len(sys.argv) > 2 else
                         "tests/data/bad/limits/pq_table_dictionary_count_4e8.parquet")
data = open(src, "rb").read()
assert data[:4] == b"PAR1" and data[-4:] == b"PAR1"
flen = struct.unpack("<I", data[-8:-4])[0]
meta, _ = struct_(data, len(data) - 8 - flen)

row_groups = field(meta, 4)[2][1]
chunk = field(row_groups[0], 1)[2][1][0]
cmd = field(chunk, 3)[2]
dict_off = field(cmd, 11)
assert dict_off is not None, "the first column chunk has no dictionary page"
pos = dict_off[2]
header, end = struct_(data, pos)
assert field(header, 1)[2] == 2, "not a DICTIONARY_PAGE"
dph = field(header, 7)[2]
field(dph, 1)[2] = 400_000_000
new_header = enc_struct(header)
delta = len(new_header) - (end - pos)
body = data[:pos] + new_header + data[end:len(data) - 8 - flen]

OFFSETS = {"cc": (2,), "cmd": (9, 10, 11), "rg": (5,)}


def moved(v):
    return v + delta if v > pos else v


for rg in row_groups:
    grew = False
    for cc in field(rg, 1)[2][1]:
        # drop the page index (its page offsets would move too)
        cc[:] = [f for f in cc if f[0] not in (4, 5, 6, 7)]
        for f in cc:
            if f[0] in OFFSETS["cc"]:
                f[2] = moved(f[2])
        m = field(cc, 3)[2]
        if field(m, 11) is not None and field(m, 11)[2] == pos:
            for fid in (6, 7):  # total uncompressed / compressed size
                field(m, fid)[2] += delta
            grew = True
        for f in m:
            if f[0] in OFFSETS["cmd"]:
                f[2] = moved(f[2])
    for f in rg:
        if f[0] in OFFSETS["rg"]:
            f[2] = moved(f[2])
    if grew:
        for fid in (2, 6):
            if field(rg, fid) is not None:
                field(rg, fid)[2] += delta
footer = enc_struct(meta)
out = body + footer + struct.pack("<I", len(footer)) + b"PAR1"
open(dst, "wb").write(out)
print(f"{dst}: {len(out)} bytes; dictionary page at {pos}: 400000000 values, header {delta:+d} bytes")
