#!/usr/bin/env python3
"""An independent reader of TensorBoard event files, written from the format
alone (python3 standard library only), for tfevents' tests.

Usage: read_events.py FILE...
Prints one line per FILE, a JSON object {"events": [...], "tail": N}, where each event is
{"wall_time", "step", "file_version", "values": [{"tag", "value"}]} and tail
is the number of bytes of a record cut short at the end. Exits 1 on a
checksum that does not match or a malformed protobuf.
"""
import json
import struct
import sys


def _crc32c_table():
    poly = 0x82F63B78  # Castagnoli, reflected
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ poly if c & 1 else c >> 1
        table.append(c)
    return table


TABLE = _crc32c_table()


def crc32c(data):
    c = 0xFFFFFFFF
    for b in data:
        c = TABLE[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


def masked(data):
    c = crc32c(data)
    return (((c >> 15) | (c << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def varint(b, i):
    shift = result = 0
    while True:
        if i >= len(b) or shift > 63:
            raise ValueError("bad varint at %d" % i)
        x = b[i]
        i += 1
        result |= (x & 0x7F) << shift
        shift += 7
        if not x & 0x80:
            return result, i


def fields(b):
    """Yields (field number, wire type, value) of a protobuf message."""
    i = 0
    while i < len(b):
        key, i = varint(b, i)
        num, typ = key >> 3, key & 7
        if typ == 0:
            v, i = varint(b, i)
        elif typ == 1:
            v, i = b[i:i + 8], i + 8
        elif typ == 2:
            n, i = varint(b, i)
            v, i = b[i:i + n], i + n
        elif typ == 5:
            v, i = b[i:i + 4], i + 4
        else:
            raise ValueError("wire type %d" % typ)
        if i > len(b):
            raise ValueError("field %d runs past the message" % num)
        yield num, typ, v


def event(b):
    e = {"wall_time": 0.0, "step": 0, "file_version": "", "values": []}
    for num, typ, v in fields(b):
        if num == 1 and typ == 1:
            e["wall_time"] = struct.unpack("<d", v)[0]
        elif num == 2 and typ == 0:
            e["step"] = v - (1 << 64) if v >= 1 << 63 else v
        elif num == 3 and typ == 2:
            e["file_version"] = v.decode("utf-8")
        elif num == 5 and typ == 2:
            for snum, styp, sv in fields(v):
                if snum != 1 or styp != 2:
                    continue
                val = {"tag": "", "value": 0.0}
                for vnum, vtyp, vv in fields(sv):
                    if vnum == 1 and vtyp == 2:
                        val["tag"] = vv.decode("utf-8")
                    elif vnum == 2 and vtyp == 5:
                        val["value"] = struct.unpack("<f", vv)[0]
                e["values"].append(val)
    return e


def read(data):
    events, off = [], 0
    while off < len(data):
        if len(data) - off < 12:
            break
        header = data[off:off + 8]
        (n,) = struct.unpack("<Q", header)
        (hcrc,) = struct.unpack("<I", data[off + 8:off + 12])
        if hcrc != masked(header):
            raise ValueError("record at byte %d: length checksum" % off)
        end = off + 12 + n
        if len(data) < end + 4:
            break
        body = data[off + 12:end]
        (dcrc,) = struct.unpack("<I", data[end:end + 4])
        if dcrc != masked(body):
            raise ValueError("record at byte %d: data checksum" % off)
        events.append(event(body))
        off = end + 4
    return {"events": events, "tail": len(data) - off}


def main():
    for path in sys.argv[1:]:
        with open(path, "rb") as f:
            data = f.read()
        try:
            out = read(data)
        except ValueError as err:
            print("read_events.py: %s: %s" % (path, err), file=sys.stderr)
            sys.exit(1)
        print(json.dumps(out))


if __name__ == "__main__":
    main()
