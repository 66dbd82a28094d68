"""Reads and writes NumPy .npy files with the standard library only, so the
run-module tests check the files it writes (and feed it the files they need,
broken ones included) without NumPy.

  npy_tool.py show FILE                  prints version, descr, fortran_order,
                                         shape, the data offset and the values
  npy_tool.py write FILE DESCR SHAPE V.. writes version 1 (SHAPE as 2,3 or
       [--version=N] [--fortran]         "" for 0-d); --version 2/3 a wider header
  npy_tool.py raw FILE FORMAT V..        raw little-endian values (struct FORMAT)
  npy_tool.py truncate FILE N            cuts FILE to its first N bytes
  npy_tool.py header FILE TEXT           a version 1 file with header TEXT, no data
"""
import ast
import struct
import sys

MAGIC = b"\x93NUMPY"
# descr code -> struct format (bf16 travels as <u2).
FORMATS = {"f2": "e", "f4": "f", "f8": "d", "b1": "?", "i1": "b", "i2": "h", "i4": "i",
           "i8": "q", "u1": "B", "u2": "H", "u4": "I", "u8": "Q"}


def read(path):
    data = open(path, "rb").read()
    assert data[:6] == MAGIC, "no magic"
    major, minor = data[6], data[7]
    if major == 1:
        (length,), start = struct.unpack("<H", data[8:10]), 10
    else:
        (length,), start = struct.unpack("<I", data[8:12]), 12
    header = ast.literal_eval(data[start:start + length].decode("latin1"))
    return (major, minor), header, data[start + length:], start + length


def show(path):
    version, header, body, offset = read(path)
    descr = header["descr"]
    fmt = FORMATS[descr[1:]]
    order = ">" if descr[0] == ">" else "<"
    count = 1
    for dim in header["shape"]:
        count *= dim
    size = struct.calcsize(fmt)
    assert len(body) == count * size, "data size %d, expected %d" % (len(body), count * size)
    values = struct.unpack(order + fmt * count, body)
    print("version=%d.%d descr=%s fortran_order=%s shape=%s data_offset=%d aligned=%s" % (
        version[0], version[1], descr, header["fortran_order"], tuple(header["shape"]), offset,
        offset % 64 == 0))
    print("values=" + " ".join(repr(v) for v in values))


def header_bytes(text, version):
    text = text.encode("latin1")
    prefix = 10 if version == 1 else 12
    pad = 63 - (prefix + len(text)) % 64
    text += b" " * pad + b"\n"
    length = struct.pack("<H" if version == 1 else "<I", len(text))
    return MAGIC + bytes([version, 0]) + length + text


def write(path, descr, shape, values, version=1, fortran=False):
    dims = tuple(int(d) for d in shape.split(",") if d)
    header = "{'descr': '%s', 'fortran_order': %s, 'shape': %r, }" % (descr, fortran, dims)
    fmt = FORMATS[descr[1:]]
    order = ">" if descr[0] == ">" else "<"
    parse = float if fmt in "efd" else (lambda v: v in ("1", "True", "true")) if fmt == "?" else int
    body = struct.pack(order + fmt * len(values), *[parse(v) for v in values])
    open(path, "wb").write(header_bytes(header, version) + body)


def main(argv):
    command, path = argv[1], argv[2]
    if command == "show":
        show(path)
    elif command == "write":
        options = [a for a in argv[3:] if a.startswith("--")]
        args = [a for a in argv[3:] if not a.startswith("--")]
        version = int(next((o.split("=")[1] for o in options if o.startswith("--version=")), 1))
        write(path, args[0], args[1], args[2:], version, "--fortran" in options)
    elif command == "raw":
        fmt = argv[3]
        parse = float if fmt in "efd" else int
        values = [parse(v) for v in argv[4:]]
        open(path, "wb").write(struct.pack("<" + fmt * len(values), *values))
    elif command == "truncate":
        data = open(path, "rb").read()
        open(path, "wb").write(data[:int(argv[3])])
    elif command == "header":
        open(path, "wb").write(header_bytes(argv[3], 1))
    else:
        sys.exit("unknown command " + command)


if __name__ == "__main__":
    main(sys.argv)
