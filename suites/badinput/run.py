#!/usr/bin/env python3
"""run.py XO CASE | --list - the bad-input table of the model commands.

Each row of CASES is one hostile input given to `xo` the way a careless user
or an attacker would: the exit code it must give, a regex its one stderr line
must match, and the files that must be exactly as they were afterwards (bytes,
file type, symlink target). Every case runs in a fresh directory built from
the golden fixture suites/golden/mixed_a (40 samples of (17, 2), 5 classes)
and a good checkpoint trained from it, so a case that clobbers something is
seen. Standard library only.

Checks common to every row: the exit code; with exit 2, stderr is exactly one
line, starts "xo ", and holds no control byte (an ESC or newline from a file
must arrive escaped); the protected paths are unchanged.
"""
import copy
import hashlib
import os
import re
import shutil
import stat
import struct
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
GOLDEN = os.path.join(HERE, "..", "golden", "mixed_a")
MODEL = os.path.join(GOLDEN, "model.model")


# ---- .npy files (format 1.0, C order) ----------------------------------------

def npy_bytes(descr, shape, payload):
    shape_s = "(" + ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"
    header = "{'descr': %s, 'fortran_order': False, 'shape': %s, }" % (descr, shape_s)
    pad = 64 - (10 + len(header) + 1) % 64
    header = header + " " * (pad % 64) + "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode("latin1") + payload


def raw_npy(path, header, count):
    """A .npy of count float32 zeros under the header dict text as given
    (padded and ended as NumPy does)."""
    pad = 64 - (10 + len(header) + 1) % 64
    h = header + " " * (pad % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(h)) + h.encode("latin1") +
                bytes(4 * count))


def write_npy(path, descr, shape, payload):
    with open(path, "wb") as f:
        f.write(npy_bytes(descr, shape, payload))


def read_f32(path):
    data = open(path, "rb").read()
    hlen = struct.unpack("<H", data[8:10])[0]
    header = data[10:10 + hlen].decode("latin1")
    shape = tuple(int(d) for d in re.search(r"\(([^)]*)\)", header).group(1).split(",") if d.strip())
    body = data[10 + hlen:]
    return shape, list(struct.unpack("<%df" % (len(body) // 4), body))


def write_f32(path, shape, values):
    write_npy(path, "'<f4'", shape, struct.pack("<%df" % len(values), *values))


# ---- fixtures -----------------------------------------------------------------

def fixtures(d, xo):
    """Files every case may use, in d."""
    xs, x = read_f32(os.path.join(GOLDEN, "x_train.npy"))
    ys, y = read_f32(os.path.join(GOLDEN, "y_train.npy"))
    n, classes = ys
    per = len(x) // n
    ids = [row.index(1.0) for row in (y[i * classes:(i + 1) * classes] for i in range(n))]
    write_f32(f"{d}/x.npy", xs, x)
    write_f32(f"{d}/y.npy", ys, y)
    for name, pos, val in (("x_nan", 3 * per + 5, float("nan")), ("x_inf", 7 * per, float("inf"))):
        v = list(x)
        v[pos] = val
        write_f32(f"{d}/{name}.npy", xs, v)
    # finite but so large that conv sums overflow: the loss becomes NaN
    write_f32(f"{d}/x_huge.npy", xs, [3e38 if i % 2 == 0 else -3e38 for i in range(len(x))])
    for name, row, vals in (("y_nan", 2, [float("nan")] + [0.0] * (classes - 1)),
                            ("y_negative", 5, [-1.0, 1.0, 1.0] + [0.0] * (classes - 3)),
                            ("y_not_one_hot", 6, [0.5, 0.5] + [0.0] * (classes - 2))):
        v = list(y)
        v[row * classes:(row + 1) * classes] = vals
        write_f32(f"{d}/{name}.npy", ys, v)
    write_npy(f"{d}/y_int32.npy", "'<i4'", (n,), struct.pack("<%di" % n, *ids))
    write_npy(f"{d}/y_int64.npy", "'<i8'", (n,), struct.pack("<%dq" % n, *ids))
    bad = list(ids)
    bad[4] = 7
    write_npy(f"{d}/y_int_range.npy", "'<i8'", (n,), struct.pack("<%dq" % n, *bad))
    bad[4] = -2
    write_npy(f"{d}/y_int_negative.npy", "'<i4'", (n,), struct.pack("<%di" % n, *bad))
    # a class id of exactly `classes`, the first value past the bound: in
    # the middle (it would set the next sample's first class) and in the
    # last sample (it would write past the one-hot buffer)
    edge = list(ids)
    edge[4] = classes
    write_npy(f"{d}/y_int_at_classes.npy", "'<i8'", (n,), struct.pack("<%dq" % n, *edge))
    edge = list(ids)
    edge[n - 1] = classes
    write_npy(f"{d}/y_int_last_at_classes.npy", "'<i4'", (n,), struct.pack("<%di" % n, *edge))
    write_f32(f"{d}/y_ids_at_classes.npy", (n,), [float(i) for i in edge])
    # the last class id is a class: every sample labelled classes - 1
    write_npy(f"{d}/y_int_top.npy", "'<i8'", (n,), struct.pack("<%dq" % n, *([classes - 1] * n)))
    fbad = [float(i) for i in ids]
    fbad[9] = -1.0
    write_f32(f"{d}/y_ids_negative.npy", (n,), fbad)
    # control bytes in a dtype and in a model spec
    with open(f"{d}/x_esc.npy", "wb") as f:
        f.write(npy_bytes("'<f4\x1b[31m\nX'", xs, b""))
    with open(f"{d}/esc.model", "w") as f:
        f.write("input 17 2\nconv1d filters=4 kernel_size=3 name=a\x1b[2Jb\x07 colour=red\n")
    with open(f"{d}/huge_strides.model", "w") as f:
        f.write("input 17 2\nconv1d filters=4 kernel_size=3 padding=same "
                "strides=1099511627776\nflatten\ndense units=5 activation=softmax\n")
    # rank-3 samples (input H W C): layers that do not take one, a size overflow
    # Dense on [h][w][ch] is Keras's (last axis); training on its
    # [h][w][units] output is refused: the losses take a flat output
    write_f32(f"{d}/x3d.npy", (4, 6, 5, 2), [0.25] * (4 * 6 * 5 * 2))
    write_f32(f"{d}/y3d.npy", (4, 6 * 5 * 5), [0.5] * (4 * 6 * 5 * 5))
    for name, text in (("rank3_dense", "input 6 5 2\ncompile loss=mse optimizer=adam\n"
                                       "dense units=5\n"),
                       ("rank3_conv1d", "input 6 5 2\nconv1d filters=4 kernel_size=3\nflatten\n"
                                        "dense units=5 activation=softmax\n"),
                       ("rank3_huge", "input 4194304 4194304 4194304\nflatten\n"
                                      "dense units=5 activation=softmax\n"),
                       # conv2d geometry errors
                       ("c2d_rank2", "input 17 2\nconv2d filters=4 kernel_size=3\nflatten\n"
                                     "dense units=5 activation=softmax\n"),
                       ("c2d_empty", "input 8 6 1\nconv2d filters=4 kernel_size=3 kernel_w=7\n"
                                     "flatten\ndense units=5 activation=softmax\n"),
                       ("c2d_sd", "input 8 6 1\nconv2d filters=4 kernel_size=3 strides=2 "
                                  "dilation_w=2\nflatten\ndense units=5 activation=softmax\n"),
                       # conv1d_transpose runs as conv2d_transpose: its refusals name the 1-D kind
                       ("ct1_op", "input 17 2\nconv1d_transpose filters=4 kernel_size=3 "
                                  "strides=2 output_padding=5\nflatten\n"
                                  "dense units=5 activation=softmax\n"),
                       # separable_conv1d: dilation (the depthwise op takes 1 only),
                       # a kernel longer than the input
                       ("sep1_dil", "input 17 2\nseparable_conv1d filters=4 kernel_size=3 "
                                    "dilation_rate=2\nflatten\ndense units=5 activation=softmax\n"),
                       ("sep1_long", "input 17 2\nseparable_conv1d filters=4 kernel_size=30\n"
                                     "flatten\ndense units=5 activation=softmax\n"),
                       # zero padding: a negative or malformed margin, a rank-3 input
                       ("zp_negative", "input 17 2\nzero_padding1d padding=-1\nflatten\n"
                                       "dense units=5 activation=softmax\n"),
                       ("zp_three", "input 17 2\nzero_padding1d padding=1,2,3\nflatten\n"
                                    "dense units=5 activation=softmax\n"),
                       ("zp_rank3", "input 8 6 1\nzero_padding1d\nflatten\n"
                                    "dense units=5 activation=softmax\n"),
                       # cropping: a crop that leaves no step
                       ("crop_all", "input 17 2\ncropping1d cropping=9,8\nflatten\n"
                                    "dense units=5 activation=softmax\n"),
                       # upsampling: size a positive integer
                       ("up_zero", "input 17 2\nup_sampling1d size=0\nflatten\n"
                                   "dense units=5 activation=softmax\n"),
                       # the 2-D forms: bilinear, a crop that leaves nothing
                       ("up_bilinear", "input 8 6 1\nup_sampling2d interpolation=bilinear\n"
                                       "flatten\ndense units=5 activation=softmax\n"),
                       ("crop2d_all", "input 8 6 1\ncropping2d cropping=1,3\nflatten\n"
                                      "dense units=5 activation=softmax\n"),
                       # permute: not a permutation, dims of another rank
                       ("perm_repeat", "input 17 2\npermute dims=1,1\nflatten\n"
                                       "dense units=5 activation=softmax\n"),
                       ("perm_rank", "input 17 2\npermute dims=3,1,2\nflatten\n"
                                     "dense units=5 activation=softmax\n"),
                       # repeat_vector: a [steps][channels] input (Keras: 2-D only)
                       ("repeat_rank", "input 17 2\nrepeat_vector n=2\nflatten\n"
                                       "dense units=5 activation=softmax\n"),
                       # reshape: another size, two -1s
                       ("reshape_size", "input 17 2\nreshape target_shape=5,7\nflatten\n"
                                        "dense units=5 activation=softmax\n"),
                       ("reshape_two", "input 17 2\nreshape target_shape=-1,-1\nflatten\n"
                                       "dense units=5 activation=softmax\n"),
                       # graphs: an unknown input, a layer below (a cycle or a
                       # forward reference), merge shapes, a second output
                       ("graph_unknown", "input 17 2\nflatten\nadd inputs=flatten,nope\n"
                                         "dense units=5 activation=softmax\n"),
                       ("graph_forward", "input 17 2\nflatten name=a inputs=b\n"
                                         "flatten name=b inputs=a\n"
                                         "dense units=5 activation=softmax\n"),
                       ("graph_shapes", "input 17 2\nconv1d name=c filters=3 kernel_size=1\n"
                                        "add inputs=c,input\nflatten\n"
                                        "dense units=5 activation=softmax\n"),
                       ("graph_two_outputs", "input 17 2\nflatten name=f\n"
                                             "dense name=d units=3 activation=softmax\n"
                                             "dense inputs=f units=5 activation=softmax\n"),
                       # time_distributed: a wrapped kind it does not take; over
                       # conv1d, a sample without a [len][ch] step
                       ("td_lstm", "input 17 2\ntime_distributed layer=lstm units=3\nflatten\n"
                                   "dense units=5 activation=softmax\n"),
                       ("td_conv1d_rank", "input 17 2\ntime_distributed layer=conv1d filters=2 "
                                          "kernel_size=2\nflatten\ndense units=5 "
                                          "activation=softmax\n"),
                       # bidirectional: a wrapped kind it does not take; merge_mode
                       # None (two outputs); the wrapped layer going backwards
                       ("bi_dense", "input 17 2\nbidirectional layer=dense units=3\nflatten\n"
                                    "dense units=5 activation=softmax\n"),
                       ("bi_none", "input 17 2\nbidirectional layer=lstm units=3 "
                                   "merge_mode=None\ndense units=5 activation=softmax\n"),
                       ("bi_back", "input 17 2\nbidirectional layer=gru units=3 "
                                   "go_backwards=True\ndense units=5 activation=softmax\n"),
                       # multi_head_attention: attention dropout outside [0, 1), no
                       # heads, one input
                       ("mha_dropout", "input 17 2\nmulti_head_attention inputs=input,input "
                                       "num_heads=2 key_dim=2 dropout=1.0\nflatten\n"
                                       "dense units=5 activation=softmax\n"),
                       ("mha_dropout_neg", "input 17 2\nmulti_head_attention inputs=input,input "
                                           "num_heads=2 key_dim=2 dropout=-0.1\nflatten\n"
                                           "dense units=5 activation=softmax\n"),
                       ("mha_no_heads", "input 17 2\nmulti_head_attention inputs=input,input "
                                        "key_dim=2\nflatten\ndense units=5 activation=softmax\n"),
                       ("mha_one_input", "input 17 2\nmulti_head_attention num_heads=2 "
                                         "key_dim=2\nflatten\ndense units=5 activation=softmax\n")):
        with open(f"{d}/{name}.model", "w") as f:
            f.write(text)
    # embedding models and int32/int64 ids
    emb = "embedding input_dim=50 output_dim=4\nflatten\ndense units=5 activation=softmax\n"
    for name, text in (("emb", "input 12 dtype=int32\n" + emb),
                       ("emb_mask", "input 12 dtype=int32\n" + emb.replace("\n", " mask_zero=True\n", 1)),
                       ("emb_float_input", "input 12\n" + emb),
                       ("emb_int_dense", "input 12 dtype=int32\ndense units=5 activation=softmax\n")):
        with open(f"{d}/{name}.model", "w") as f:
            f.write(text)
    # Keras's mask of Embedding(mask_zero=True) reaching a layer that would
    # use it and xo does not (refused: Softmax's masked positions), and one
    # that drops it (Flatten: runs, as in Keras)
    me = "input 12 dtype=int32\nembedding name=e input_dim=50 output_dim=4 mask_zero=True\n"
    head = "global_average_pooling1d\ndense units=5 activation=softmax\n"
    for name, text in (("mask_softmax", me + "dense units=4\nsoftmax\n" + head),
                       ("mask_bn", me + "batch_normalization\n" + head),
                       ("mask_concat", me + "dense name=d units=4\nconcatenate inputs=e,d axis=1\n" + head),
                       ("mask_td", me + "time_distributed layer=dense units=4\n" + head),
                       ("mask_flatten", me + "dropout rate=0.1\nflatten\ndense units=5 activation=softmax\n")):
        with open(f"{d}/{name}.model", "w") as f:
            f.write(text)
    ids = [(i * 7 + i // 12) % 50 for i in range(n * 12)]
    write_npy(f"{d}/x_ids32.npy", "'<i4'", (n, 12), struct.pack("<%di" % (n * 12), *ids))
    bad = list(ids)
    bad[77] = 50
    write_npy(f"{d}/x_ids_range.npy", "'<i8'", (n, 12), struct.pack("<%dq" % (n * 12), *bad))
    bad[77] = -3
    write_npy(f"{d}/x_ids_negative.npy", "'<i4'", (n, 12), struct.pack("<%di" % (n * 12), *bad))
    write_f32(f"{d}/x_ids_float.npy", (n, 12), [float(i) for i in ids])
    write_npy(f"{d}/x_int_per.npy", "'<i4'", (n, per), struct.pack("<%di" % (n * per), *([1] * (n * per))))
    # multi-input models: x.npy's (17, 2) samples and a (3,) second input;
    # a second input's file with a sample short, and of another shape
    for name, text in (("multi", "input name=a 17 2\ninput name=b 3\nflatten name=f inputs=a\n"
                                 "dense name=db inputs=b units=34\nadd inputs=f,db\n"
                                 "dense units=5 activation=softmax\n"),
                       # a long sequence through layers whose weights do not grow
                       # with it: activations, not parameters, are what is large
                       ("long_seq", "input 20000 4\nconv1d filters=4 kernel_size=3 padding=same\n"
                                    "global_average_pooling1d\ndense units=5 activation=softmax\n"),
                       # a model of 9 inputs, one over the most xo runs
                       ("nin9", "".join("input name=i%d 3\n" % k for k in range(9)) +
                                "dense units=5 activation=softmax\n"),
                       ("multi_unnamed", "input 17 2\ninput 3\nflatten\n"
                                         "dense units=5 activation=softmax\n"),
                       ("multi_unused", "input name=a 17 2\ninput name=b 3\nflatten inputs=a\n"
                                        "dense units=5 activation=softmax\n")):
        with open(f"{d}/{name}.model", "w") as f:
            f.write(text)
    write_f32(f"{d}/x_b.npy", (n, 3), [0.25] * (n * 3))
    write_f32(f"{d}/x_long.npy", (2, 20000, 4), [0.25] * (2 * 20000 * 4))
    write_f32(f"{d}/x_b_rows.npy", (n - 1, 3), [0.25] * ((n - 1) * 3))
    write_f32(f"{d}/x_b_shape.npy", (n, 4), [0.25] * (n * 4))
    # the right number of values per sample in another shape: x's bytes as
    # (n, ch, len), b's as (n, 1, 3)
    write_f32(f"{d}/x_transposed.npy", (xs[0], xs[2], xs[1]), x)
    write_f32(f"{d}/x_b_3d.npy", (n, 1, 3), [0.25] * (n * 3))
    # an existing output, and things that are not plain files
    shutil.copy(f"{d}/y.npy", f"{d}/out.npy")
    os.mkfifo(f"{d}/fifo")
    os.mkdir(f"{d}/adir")
    with open(f"{d}/target.npy", "w") as f:
        f.write("the symlink's target\n")
    os.symlink("target.npy", f"{d}/link.npy")
    # two good checkpoints of different runs
    for name, seed in (("ckpt", "1"), ("ckpt_b", "2")):
        r = subprocess.run([xo, "train", "--model", MODEL, "--x", f"{d}/x.npy", "--y", f"{d}/y.npy",
                            "--save", f"{d}/{name}", "--epochs", "1", "--batch-size", "16",
                            "--device", "ref", "--seed", seed],
                           capture_output=True, text=True)
        if r.returncode:
            sys.exit(f"badinput: fixture checkpoint {name}: {r.stderr.strip()}")
    os.mkdir(f"{d}/userdir")
    with open(f"{d}/userdir/notes.txt", "w") as f:
        f.write("my notes\n")
    os.mkdir(f"{d}/userdir2")
    os.mkdir(f"{d}/userdir2/data.npy")
    with open(f"{d}/userdir2/data.npy/keep.txt", "w") as f:
        f.write("a directory named like a weights file\n")
    os.mkdir(f"{d}/ckdir")
    os.symlink("ckdir", f"{d}/cklink")


def snapshot(path):
    """What must not change: type, bytes (recursively for directories), link target."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return ("absent",)
    if stat.S_ISLNK(st.st_mode):
        return ("link", os.readlink(path))
    if stat.S_ISREG(st.st_mode):
        return ("file", hashlib.sha256(open(path, "rb").read()).hexdigest())
    if stat.S_ISDIR(st.st_mode):
        return ("dir", tuple((e, snapshot(os.path.join(path, e))) for e in sorted(os.listdir(path))))
    return ("special", stat.S_IFMT(st.st_mode), st.st_rdev)


# ---- the table ------------------------------------------------------------------

def train(x="x.npy", y="y.npy", save="ckpt", *extra):
    return ["train", "--model", MODEL, "--x", x, "--y", y, "--save", save, "--epochs", "1",
            "--batch-size", "16", "--device", "ref", *extra]


def seed(x="x.npy", y="y.npy", model=MODEL, *extra):
    """`xo seed --model M --data X Y`, one short epoch on ref."""
    data = ["--data", x, y] if y is not None else ["--data", x]
    return ["seed", "--model", model, *data, "--device", "ref", "--epochs", "1",
            "--batch-size", "16", "--repeat", "1", *extra]


def predict(x="x.npy", out="out.npy", weights="ckpt", model=MODEL):
    return ["predict", "--model", model, "--weights", weights, "--input", x, "--output", out,
            "--device", "ref"]


def mix(d):  # one file from another save
    shutil.copy(f"{d}/ckpt_b/dense.kernel.npy", f"{d}/ckpt/dense.kernel.npy")


def truncate(d):
    p = f"{d}/ckpt/dense.kernel.npy"
    data = open(p, "rb").read()
    open(p, "wb").write(data[:-8])


def drop_file(d):
    os.remove(f"{d}/ckpt/dense.bias.npy")


def cut_manifest(d):
    p = f"{d}/ckpt/xo-checkpoint.txt"
    lines = open(p).read().splitlines(True)
    open(p, "w").write("".join(lines[:-2]))


def old_writer_killed(d):  # what the writer before the manifest left after a kill
    os.remove(f"{d}/ckpt/xo-checkpoint.txt")
    shutil.copy(f"{d}/ckpt_b/dense.kernel.npy", f"{d}/ckpt/dense.kernel.npy")
    shutil.copy(f"{d}/ckpt_b/dense.bias.npy", f"{d}/ckpt/dense.bias.npy.tmp")


# ---- Keras files: each refused with one line, exit 2 ----------

KERAS = os.path.join(HERE, "..", "golden", "keras")
HOSTILE = os.path.join(HERE, "..", "..", "fuzz", "regress", "keras_h5")  # test_keras_hostile.c's files


def empty_npys(d):
    """Arrays of no values, as NumPy saves them, and one whose header says
    (0, 34) over the data of (4, 34)."""
    write_f32(f"{d}/x_e0.npy", (0, 17, 2), [])
    write_f32(f"{d}/x_e1.npy", (8, 0), [])
    write_f32(f"{d}/x_e2.npy", (0,), [])
    write_npy(f"{d}/x_e3.npy", "'<f4'", (0, 34), bytes(4 * 34))
    write_f32(f"{d}/y_e0.npy", (40, 0), [])
    write_npy(f"{d}/y_e1.npy", "'<i4'", (0,), b"")


def f8_npys(d):
    """NumPy's default float64 ('<f8') and a big-endian host's '>f8' for
    x.npy and y.npy: x's values moved by less than half a float32 ulp, so
    the float32 they round to is x's own; one beyond float32's range, a NaN
    input, a truncated file, a shape whose bytes overflow."""
    xs, x = read_f32(f"{d}/x.npy")
    ys, y = read_f32(f"{d}/y.npy")
    near = [v * (1 + 2.0 ** -30) for v in x]
    write_npy(f"{d}/x_f8.npy", "'<f8'", xs, struct.pack("<%dd" % len(x), *near))
    write_npy(f"{d}/x_f8_be.npy", "'>f8'", xs, struct.pack(">%dd" % len(x), *near))
    write_npy(f"{d}/y_f8.npy", "'<f8'", ys, struct.pack("<%dd" % len(y), *y))
    big = list(near)
    big[2 * 34 + 9] = -3.5e38
    write_npy(f"{d}/x_f8_big.npy", "'<f8'", xs, struct.pack("<%dd" % len(x), *big))
    nan = list(near)
    nan[3 * 34 + 5] = float("nan")
    write_npy(f"{d}/x_f8_nan.npy", "'<f8'", xs, struct.pack("<%dd" % len(x), *nan))
    write_npy(f"{d}/x_f8_short.npy", "'<f8'", xs, struct.pack("<%dd" % (len(x) - 1), *near[1:]))
    write_npy(f"{d}/x_f8_huge.npy", "'<f8'", (2 ** 31, 2 ** 29, 2), b"")


def seed_loss_files(d):
    """The model compiled with binary_crossentropy and with
    sparse_categorical_crossentropy (seed_bce.model, seed_scce.model),
    y.npy's labels as multi-hot rows (sample 1 with a second 1,
    y_multi.npy) and as (n, 1) class ids (y_ids_n1.npy, float32)."""
    base = "".join(l for l in open(MODEL) if not l.startswith("compile"))
    for name, loss in (("bce", "binary_crossentropy"), ("scce", "sparse_categorical_crossentropy")):
        open(f"{d}/seed_{name}.model", "w").write(base + f"compile loss={loss} optimizer=adam\n")
    ys, y = read_f32(f"{d}/y.npy")
    n, classes = ys
    multi = list(y)
    multi[classes + (multi[classes:2 * classes].index(1.0) + 1) % classes] = 1.0
    write_f32(f"{d}/y_multi.npy", ys, multi)
    ids = [float(y[i * classes:(i + 1) * classes].index(1.0)) for i in range(n)]
    write_f32(f"{d}/y_ids_n1.npy", (n, 1), ids)


def int_label_npys(d):
    """y.npy's labels in the integer and bool dtypes NumPy writes (MNIST's
    uint8 among them): class ids y_ids_<dtype>.npy and one-hot rows
    y_oh_<dtype>.npy, a big-endian int16, two bool files (ids 0 and 1, and
    one-hot); and bad ones: a negative int8 id, a uint16 id past the
    classes, a uint64 beyond int64, a truncated uint8 file, a uint8 one-hot
    row holding a 2; x.npy's shape in uint8 (a float32 input's file)."""
    xs, x = read_f32(f"{d}/x.npy")
    write_npy(f"{d}/x_uint8.npy", "'|u1'", xs, bytes(len(x)))
    ys, y = read_f32(f"{d}/y.npy")
    n, classes = ys
    ids = [row.index(1.0) for row in (y[i * classes:(i + 1) * classes] for i in range(n))]
    oh = [int(v) for v in y]
    for code, fmt in (("|u1", "B"), ("|i1", "b"), ("<i2", "h"), ("<u2", "H"), ("<u4", "I"),
                      ("<u8", "Q")):
        name = {"u": "uint", "i": "int"}[code[1]] + str(8 * int(code[2]))
        write_npy(f"{d}/y_ids_{name}.npy", "'%s'" % code, (n,), struct.pack("<%d%s" % (n, fmt), *ids))
        write_npy(f"{d}/y_oh_{name}.npy", "'%s'" % code, ys, struct.pack("<%d%s" % (len(oh), fmt), *oh))
    write_npy(f"{d}/y_ids_int16_be.npy", "'>i2'", (n,), struct.pack(">%dh" % n, *ids))
    write_npy(f"{d}/y_ids_bool.npy", "'|b1'", (n,), bytes(i % 2 for i in range(n)))
    write_npy(f"{d}/y_oh_bool.npy", "'|b1'", ys, bytes(oh))
    bad = list(ids)
    bad[4] = -3
    write_npy(f"{d}/y_ids_int8_negative.npy", "'|i1'", (n,), struct.pack("<%db" % n, *bad))
    bad[4] = 300
    write_npy(f"{d}/y_ids_uint16_range.npy", "'<u2'", (n,), struct.pack("<%dH" % n, *bad))
    bad[4] = 2 ** 63
    write_npy(f"{d}/y_ids_uint64_huge.npy", "'<u8'", (n,), struct.pack("<%dQ" % n, *bad))
    write_npy(f"{d}/y_ids_uint8_short.npy", "'|u1'", (n,), bytes(ids[:-3]))
    two = list(oh)
    two[6 * classes + 1] = 2
    write_npy(f"{d}/y_oh_uint8_two.npy", "'|u1'", ys, bytes(two))


def kpredict(model, weights=None):
    argv = ["predict", "--model", model, "--input", "kx.npy", "--output", "out.npy",
            "--device", "ref"]
    return argv + (["--weights", weights] if weights else [])


def keras_inputs(d):
    shutil.copy(os.path.join(KERAS, "seed.x.npy"), f"{d}/kx.npy")


def kx_flat(per):
    """kx.npy of 4 samples of per values: the input of a model whose file
    is what a case refuses (the input files are checked first)."""
    return lambda d: write_f32(f"{d}/kx.npy", (4, per), [0.25] * (4 * per))


def keras_truncated(d):
    keras_inputs(d)
    data = open(os.path.join(KERAS, "seed.keras"), "rb").read()
    open(f"{d}/trunc.keras", "wb").write(data[:len(data) // 2])


def keras_dup_member(d):
    """seed.keras with its config.json twice (Python's zipfile writes it,
    with a warning, and reads the last one)."""
    import warnings
    import zipfile
    keras_inputs(d)
    with zipfile.ZipFile(os.path.join(KERAS, "seed.keras")) as src, \
            zipfile.ZipFile(f"{d}/dup.keras", "w") as dst, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in src.namelist():
            dst.writestr(name, src.read(name))
        dst.writestr("config.json", src.read("config.json"))


def keras_no_config(d):
    import zipfile
    keras_inputs(d)
    with zipfile.ZipFile(os.path.join(KERAS, "seed.keras")) as src, \
            zipfile.ZipFile(f"{d}/noconf.keras", "w") as dst:
        for name in src.namelist():
            if name != "config.json":
                dst.writestr(name, src.read(name))


def keras_bad_json(d):
    import zipfile
    keras_inputs(d)
    with zipfile.ZipFile(os.path.join(KERAS, "seed.keras")) as src, \
            zipfile.ZipFile(f"{d}/badjson.keras", "w") as dst:
        for name in src.namelist():
            data = src.read(name)
            dst.writestr(name, data[:40] if name == "config.json" else data)


def keras_rewrite(fixture, out, d, edit):
    """d/out: FIXTURE.keras with its config.json passed through edit(cfg)
    (which changes the dict in place) and every other member as it is; the
    fixture's inputs as d/kx.npy."""
    import json
    import zipfile
    shutil.copy(os.path.join(KERAS, fixture + ".x.npy"), f"{d}/kx.npy")
    with zipfile.ZipFile(os.path.join(KERAS, fixture + ".keras")) as src, \
            zipfile.ZipFile(f"{d}/{out}", "w") as dst:
        for name in src.namelist():
            data = src.read(name)
            if name == "config.json":
                cfg = json.loads(data)
                edit(cfg)
                data = json.dumps(cfg).encode()
            dst.writestr(name, data)


def first_layer(cfg, cls):
    """The first layer entry of class cls in a model config."""
    return next(l for l in cfg["config"]["layers"] if l["class_name"] == cls)


def norm_edit(fixture, out, edit):
    """FIXTURE.keras with its Normalization's config passed through edit."""
    return lambda d: keras_rewrite(fixture, out, d,
                                   lambda cfg: edit(first_layer(cfg, "Normalization")["config"]))


def norm_weights(variance):
    """d/n.model (a normalization over 3 features, then a Dense) and its .npy
    weights d/nw with the given stored variance (a list: its length the
    shape), d/nx.npy its input."""
    def setup(d):
        open(f"{d}/n.model", "w").write("input 3\nnormalization\ndense units=2\n")
        os.makedirs(f"{d}/nw", exist_ok=True)
        write_f32(f"{d}/nw/normalization.mean.npy", (3,), [0.0, 0.5, 1.0])
        write_f32(f"{d}/nw/normalization.variance.npy", (len(variance),), variance)
        write_f32(f"{d}/nw/dense.kernel.npy", (3, 2), [0.5] * 6)
        write_f32(f"{d}/nw/dense.bias.npy", (2,), [0.0, 1.0])
        write_f32(f"{d}/nx.npy", (2, 3), [0.25] * 6)
    return setup


def keras_channels_first(d):  # pool2d.keras with its MaxPooling2D channels_first
    keras_rewrite("pool2d", "cfirst.keras", d,
                  lambda cfg: first_layer(cfg, "MaxPooling2D")["config"].update(
                      data_format="channels_first"))


def keras_layer_edit(fixture, cls, key, value, out):
    """A fixture: FIXTURE.keras with the config key of its first layer of
    class cls set to value (the options crossover refuses)."""
    def edit(cfg):
        first_layer(cfg, cls)["config"][key] = value
    return lambda d: keras_rewrite(fixture, out, d, edit)


def keras_activation_as(cls, config, out):
    """acts.keras with its first Activation layer (gelu, on [16]) replaced
    by a layer of class cls (ReLU, Softmax) with the given config keys."""
    def edit(cfg):
        layer = first_layer(cfg, "Activation")
        layer["class_name"] = cls
        layer["config"] = {k: v for k, v in layer["config"].items() if k != "activation"}
        layer["config"].update(config)
    return lambda d: keras_rewrite("acts", out, d, edit)


def keras_td_inner_edit(key, value, out):
    """td.keras with the config key of its first TimeDistributed's wrapped
    layer set to value."""
    def edit(cfg):
        first_layer(cfg, "TimeDistributed")["config"]["layer"]["config"][key] = value
    return lambda d: keras_rewrite("td", out, d, edit)


def keras_bidir_edit(where, key, value, out):
    """bidir.keras with the config key of its first Bidirectional (where
    None), or of that layer's wrapped layer or backward layer (where
    "layer" / "backward_layer"), set to value."""
    def edit(cfg):
        layer = first_layer(cfg, "Bidirectional")
        c = layer["config"] if where is None else layer["config"][where]["config"]
        c[key] = value
    return lambda d: keras_rewrite("bidir", out, d, edit)


def keras_conv2d_edit(key, value, out, **more):
    """A fixture: cnn2d.keras with its first Conv2D's config key set to value
    (and the keys of more) (the Conv2D options crossover
    refuses)."""
    def edit(cfg):
        layer = first_layer(cfg, "Conv2D")
        layer["config"][key] = value
        layer["config"].update(more)
    return lambda d: keras_rewrite("cnn2d", out, d, edit)


def keras_graph_edit(what, out):
    """A fixture: graph.keras (a Functional) with its config made into what
    crossover does not run yet: two_inputs (a second InputLayer feeding the
    branch: a model of two inputs, given one file), input_layers (the same
    without its input_layers entry), shared (the branch called twice), three (an Add of three
    tensors), two_outputs; or what it cannot read as Keras does:
    outer_name (an entry's name not its config's: Keras wires by the one
    and builds by the other), dup_name (two layers of one name); or what
    Keras refuses too: dead (conv1d_2's output taken by no layer), node1
    (add takes node 1 of conv1d_1, a layer called once)."""
    def edit(cfg):
        import copy
        c = cfg["config"]
        by = {l["name"]: l for l in c["layers"]}
        if what in ("two_inputs", "input_layers"):
            # a second InputLayer feeding the branch, listed or not
            second = copy.deepcopy(by["input_layer"])
            second["name"] = second["config"]["name"] = "second"
            c["layers"].insert(1, second)
            hist = by["conv1d_2"]["inbound_nodes"][0]["args"][0]["config"]
            hist["keras_history"] = ["second", 0, 0]
            if what == "two_inputs":
                c["input_layers"] = [["input_layer", 0, 0], ["second", 0, 0]]
        elif what == "shared":
            nodes = by["conv1d_2"]["inbound_nodes"]
            nodes.append(copy.deepcopy(nodes[0]))
        elif what == "three":
            args = by["add"]["inbound_nodes"][0]["args"][0]
            args.append(copy.deepcopy(args[1]))
        elif what == "outer_name":
            # Keras wires by the entry's name, builds by the config's
            by["conv1d_2"]["name"] = "conv1d"
        elif what == "dup_name":
            by["conv1d_2"]["name"] = by["conv1d_2"]["config"]["name"] = "conv1d"
        elif what == "dead":
            args = by["concatenate"]["inbound_nodes"][0]["args"][0]
            args[1] = copy.deepcopy(args[0])
        elif what == "node1":
            arg = by["add"]["inbound_nodes"][0]["args"][0][0]
            arg["config"]["keras_history"] = ["conv1d_1", 1, 0]
        else:
            c["output_layers"] = [["dense", 0, 0], ["conv1d_2", 0, 0]]
    return lambda d: keras_rewrite("graph", out, d, edit)


def keras_mask_edit(what, out):
    """A fixture: mask_res.keras (Embedding(mask_zero=True), a residual Add,
    GlobalAveragePooling1D called with Keras's mask=) with the pooling's
    mask= made another tensor than a mask (not_a_mask: the
    LayerNormalization's output), or the embedding's mask_zero turned off
    while the recorded mask= stays (unmasked: xo's pooling would run
    unmasked where Keras's call gets a mask)."""
    def edit(cfg):
        c = cfg["config"]
        gap = first_layer(cfg, "GlobalAveragePooling1D")
        mask = gap["inbound_nodes"][0]["kwargs"]["mask"]["config"]
        if what == "not_a_mask":
            mask["keras_history"] = [first_layer(cfg, "LayerNormalization")["config"]["name"],
                                     0, 0]
        else:
            first_layer(cfg, "Embedding")["config"]["mask_zero"] = False
        assert c["layers"]
    return lambda d: keras_rewrite("mask_res", out, d, edit)


def keras_mha_keywords(d):
    """mha.keras with its first MultiHeadAttention called with keywords,
    mha(query=q, value=v) (Keras records them in the node's kwargs)."""
    def edit(cfg):
        node = first_layer(cfg, "MultiHeadAttention")["inbound_nodes"][0]
        node["kwargs"].update(query=node["args"][0], value=node["args"][1])
        node["args"] = []
    keras_rewrite("mha", "mha_kw.keras", d, edit)


def keras_nin9(d):
    """multi.keras (3 InputLayers) with 6 more listed: a model of 9 inputs,
    one over the most xo runs; its inputs' files as nin0..8.npy."""
    import copy

    def edit(cfg):
        c = cfg["config"]
        first = c["layers"][0]
        for k in range(6):
            extra = copy.deepcopy(first)
            extra["name"] = extra["config"]["name"] = "extra%d" % k
            c["layers"].insert(1, extra)
            c["input_layers"].append(["extra%d" % k, 0, 0])
    keras_rewrite("multi", "nin9.keras", d, edit)
    for k in range(9):
        shutil.copy(f"{d}/kx.npy", f"{d}/nin{k}.npy")


def keras_masking(d, functional):
    """A Masking layer as Keras 3.15 writes it, where xo refuses it: in a
    Sequential (gru.keras) its entry alone, after the first layer (not on
    the model's input); in a Functional (functional.keras) after the
    InputLayer with the ops its mask is computed by, NotEqual before it and
    Any after it, as layers of their own, and the mask given to the next
    layer, but the NotEqual comparing with 1.0, not the mask_value (a mask
    that is not the Masking's)."""
    def tensor(name, shape, dtype="float32"):
        return {"class_name": "__keras_tensor__",
                "config": {"shape": shape, "dtype": dtype, "keras_history": [name, 0, 0]}}

    def edit(cfg):
        layers = cfg["config"]["layers"]
        inp = layers[0]["config"]["name"]
        shape = layers[0]["config"]["batch_shape"]
        masking = {"module": "keras.layers", "class_name": "Masking",
                   "config": {"name": "masking", "trainable": True,
                              "dtype": {"module": "keras", "class_name": "DTypePolicy",
                                        "config": {"name": "float32"}, "registered_name": None},
                              "mask_value": 0.0},
                   "registered_name": None}
        if not functional:  # after the first layer: not on the model's input
            layers.insert(2, masking)
            return
        masking.update(name="masking", inbound_nodes=[{"args": [tensor(inp, shape)], "kwargs": {}}])
        ops = [{"module": "keras.src.ops.numpy", "class_name": "NotEqual",
                "config": {"name": "not_equal"}, "registered_name": "NotEqual", "name": "not_equal",
                "inbound_nodes": [{"args": [tensor(inp, shape), 1.0], "kwargs": {}}]},
               masking,
               {"module": "keras.src.ops.numpy", "class_name": "Any",
                "config": {"name": "any", "axis": -1, "keepdims": False}, "registered_name": "Any",
                "name": "any",
                "inbound_nodes": [{"args": [tensor("not_equal", shape, "bool")], "kwargs": {}}]}]
        node = layers[1]["inbound_nodes"][0]
        node["args"] = [tensor("masking", shape)]
        node["kwargs"]["mask"] = tensor("any", shape[:-1], "bool")
        layers[1:1] = ops
    keras_rewrite("functional" if functional else "gru", "masking.keras", d, edit)


def keras_lzma(d, member):
    """seed.keras re-written by Python's zipfile with member LZMA-compressed
    (zipfile, and so Keras, reads it; libzip is often built without LZMA)
    and the other members stored."""
    import zipfile
    keras_inputs(d)
    with zipfile.ZipFile(os.path.join(KERAS, "seed.keras")) as src, \
            zipfile.ZipFile(f"{d}/lzma.keras", "w") as dst:
        for name in src.namelist():
            dst.writestr(name, src.read(name),
                         zipfile.ZIP_LZMA if name == member else zipfile.ZIP_STORED)


def keras_truncated_h5(d):
    keras_inputs(d)
    data = open(os.path.join(KERAS, "seed.weights.h5"), "rb").read()
    open(f"{d}/trunc.weights.h5", "wb").write(data[:len(data) // 3])


def stray(d):  # an extra .npy beside a checkpoint's files
    shutil.copy(f"{d}/ckpt_b/dense.bias.npy", f"{d}/ckpt/old_layer.kernel.npy")


def trainm(model, y="y.npy"):
    """`xo train` of another model (a compile line) on the fixture's x."""
    return ["train", "--model", model, "--x", "x.npy", "--y", y, "--save", "ckpt", "--epochs", "1",
            "--batch-size", "16", "--device", "ref"]


def compile_files(d):
    """mixed_a's model with compile lines, per-loss bad labels (40 samples,
    5 outputs) and a .keras whose compile_config Keras could write but xo
    does not implement."""
    base = open(MODEL).read()
    for name, line in (("sparse", "loss=sparse_categorical_crossentropy optimizer=adam"),
                       ("binary", "loss=binary_crossentropy optimizer=sgd momentum=0.9"),
                       ("mse", "loss=mean_squared_error optimizer=rmsprop"),
                       ("badkey", "loss=categorical_crossentropy optimizer=adam momentum=0.9"),
                       ("badloss", "loss=hinge optimizer=adam"),
                       ("badopt", "loss=mse optimizer=adagrad")):
        open(f"{d}/{name}.model", "w").write(base + "compile " + line + "\n")
    ids = [float(i % 5) for i in range(40)]
    ids[4] = 7.0
    write_f32(f"{d}/y_ids7.npy", (40,), ids)
    rows = [float((i * 3 + j) % 2) for i in range(40) for j in range(5)]
    rows[6 * 5 + 2] = 1.5
    write_f32(f"{d}/y_bin15.npy", (40, 5), rows)
    rows = [0.25] * 200
    rows[3 * 5 + 1] = float("nan")
    write_f32(f"{d}/y_mse_nan.npy", (40, 5), rows)
    keras_inputs(d)
    for name, cc in (("from_logits", {"loss": {"module": "keras.losses", "class_name": "CategoricalCrossentropy",
                                                "config": {"name": "cce", "from_logits": True}},
                                       "optimizer": "adam"}),
                     ("clipnorm", {"loss": "categorical_crossentropy",
                                   "optimizer": {"class_name": "SGD", "config": {"learning_rate": 0.01,
                                                                                  "clipnorm": 1.0}}}),
                     ("adagrad", {"loss": "categorical_crossentropy",
                                  "optimizer": {"class_name": "Adagrad", "config": {}}}),
                     # a user's registered classes under built-in names
                     ("custom_loss", {"loss": {"module": None, "class_name": "CategoricalCrossentropy",
                                               "config": {"name": "cce"},
                                               "registered_name": "mypkg>CategoricalCrossentropy"},
                                      "optimizer": "adam"}),
                     ("loss_number", {"loss": 5, "optimizer": "adam"}),
                     ("custom_opt", {"loss": "categorical_crossentropy",
                                     "optimizer": {"module": "mypkg", "class_name": "SGD",
                                                   "config": {"learning_rate": 0.01},
                                                   "registered_name": "mypkg>SGD"}})):
        keras_rewrite("seed", f"cc_{name}.keras", d,
                      lambda cfg, cc=cc: cfg.update(compile_config=cc))


def mha_mask_specs(d):
    """MultiHeadAttention's attention_mask refusals in specs: a mask that is
    no model input (a layer's output), a mask of another shape than
    [Tq][Tk] (one Keras would broadcast), attention_mask on another kind."""
    head = "input 6 4 name=x\ninput 6 6 name=m\n"
    tail = "global_average_pooling1d\ndense units=3 activation=softmax\n"
    for name, text in (
            ("mask_layer", head + "dense name=d inputs=m units=6\n"
                           "multi_head_attention inputs=x,x attention_mask=d num_heads=2 "
                           "key_dim=2\n" + tail),
            ("mask_shape", "input 6 4 name=x\ninput 1 6 name=m\n"
                           "multi_head_attention inputs=x,x attention_mask=m num_heads=2 "
                           "key_dim=2\n" + tail),
            ("mask_kind", head + "dense inputs=x units=3 attention_mask=m\n" + tail),
            ("mask_bool_dense", "input 6 4 name=x\ninput 6 6 name=m dtype=bool\n"
                                "dense name=d inputs=m units=4\n"
                                "multi_head_attention inputs=d,x attention_mask=m num_heads=2 "
                                "key_dim=2\n" + tail)):
        with open(f"{d}/{name}.model", "w") as f:
            f.write(text)


def keras_mha_mask_from_layer(d):
    """mha_mask.keras with its attention_mask the Dense's output (a mask
    computed by layers) in place of the mask Input."""
    def edit(cfg):
        node = first_layer(cfg, "MultiHeadAttention")["inbound_nodes"][0]
        node["kwargs"]["attention_mask"]["config"]["keras_history"] = ["dense", 0, 0]
    keras_rewrite("mha_mask", "mm_layer.keras", d, edit)


def keras_bool_input_dense(d):
    """mha_mask.keras with its x Input of dtype bool: a bool Input feeding
    a Dense (Keras would cast it to 0 and 1), which xo takes as an
    attention mask only."""
    def edit(cfg):
        x = next(l for l in cfg["config"]["layers"] if l["name"] == "x")
        x["config"]["dtype"] = "bool"
    keras_rewrite("mha_mask", "x_bool.keras", d, edit)


def keras_ones_mask_on_masked(d):
    """mask_cat.keras (a Concatenate of two masked tensors into the masked
    mean) with the mean's mask= rewired to Any(OnesLike(x)), the all-true
    mask Keras gives an unmasked input, while its input carries the ids'
    mask: the two disagree, so xo refuses rather than pick one."""
    def edit(cfg):
        layers = cfg["config"]["layers"]
        gap = next(l for l in layers if l["class_name"] == "GlobalAveragePooling1D")
        src = gap["inbound_nodes"][0]["args"][0]
        ones = {"module": "keras.src.ops.numpy", "class_name": "OnesLike",
                "config": {"name": "ones_x", "dtype": "bool"}, "registered_name": "OnesLike",
                "name": "ones_x", "inbound_nodes": [{"args": [src], "kwargs": {}}]}
        shape = src["config"]["shape"]
        anyl = {"module": "keras.src.ops.numpy", "class_name": "Any",
                "config": {"name": "any_x", "axis": -1, "keepdims": False},
                "registered_name": "Any", "name": "any_x",
                "inbound_nodes": [{"args": [{"class_name": "__keras_tensor__", "config": {
                    "shape": shape, "dtype": "bool", "keras_history": ["ones_x", 0, 0]}}],
                    "kwargs": {}}]}
        gap["inbound_nodes"][0]["kwargs"]["mask"]["config"]["keras_history"] = ["any_x", 0, 0]
        k = layers.index(gap)
        layers[k:k] = [ones, anyl]
    keras_rewrite("mask_cat", "ones_on_masked.keras", d, edit)


def keras_mask_op_own(d):
    """mask_cat.keras with the masked mean's mask= rewired to a mask of the
    model's own, NotEqual(ids, 5) (ops.not_equal in the model): an op
    layer xo does not read, named as one."""
    def edit(cfg):
        layers = cfg["config"]["layers"]
        gap = next(l for l in layers if l["class_name"] == "GlobalAveragePooling1D")
        ne = next(l for l in layers if l["class_name"] == "NotEqual")
        own = copy.deepcopy(ne)
        own["name"] = own["config"]["name"] = "not_five"
        own["inbound_nodes"][0]["args"][1] = 5
        gap["inbound_nodes"][0]["kwargs"]["mask"]["config"]["keras_history"] = ["not_five", 0, 0]
        k = layers.index(gap)
        layers[k:k] = [own]
    keras_rewrite("mask_cat", "mask_op_own.keras", d, edit)


def keras_mha_key_is_value(d):
    """mha_pad.keras with its attention called as mha(e, e, e): the key
    given, the value itself, as Keras's default; and the fixture as it is
    beside it (kv_same predicts the same bytes)."""
    def edit(cfg):
        mha = first_layer(cfg, "MultiHeadAttention")
        args = mha["inbound_nodes"][0]["args"]
        args.append(copy.deepcopy(args[1]))
    keras_rewrite("mha_pad", "mha_kv.keras", d, edit)
    shutil.copy(os.path.join(KERAS, "mha_pad.keras"), f"{d}/mha_pad.keras")


def bool_npy_not_mask(d):
    """mha_bool's inputs with q (float32 in the model) saved as bool."""
    for k in (1, 2):
        shutil.copy(os.path.join(KERAS, "mha_bool.x%d.npy" % k), f"{d}/x{k}.npy")
    write_npy(f"{d}/x0.npy", "'|b1'", (16, 4, 3), bytes([1, 0, 1]) * (16 * 4))


def keras_int_input(fixture, name, out):
    """FIXTURE.keras with its InputLayer `name` of dtype int32: Keras casts
    the values to integers there, which xo's float inputs do not do."""
    def edit(cfg):
        layer = next(l for l in cfg["config"]["layers"] if l["config"]["name"] == name)
        layer["config"]["dtype"] = "int32"
    return lambda d: keras_rewrite(fixture, out, d, edit)


def logits_files(d):
    """The seed's .keras with Loss configs around from_logits=True: the
    ones Keras compiles for a one-output model (a list of one, a dict keyed
    by the output layer), and what xo still refuses (Keras's other loss
    arguments off their defaults, several losses, a dict keyed by another
    name, MeanSquaredError with from_logits); spec compile lines alike."""
    def obj(cls, **cfg):
        return {"module": "keras.losses", "class_name": cls,
                "config": {"name": "l", "reduction": "sum_over_batch_size", **cfg},
                "registered_name": None}
    cce = obj("CategoricalCrossentropy", from_logits=True, label_smoothing=0.0, axis=-1)
    for name, loss in (("list", [cce]),
                       ("dict", "OUT"),
                       ("dict_other", {"not_the_output": cce}),
                       ("list_two", [cce, cce]),
                       ("smoothing", obj("CategoricalCrossentropy", from_logits=True,
                                         label_smoothing=0.1, axis=-1)),
                       ("axis", obj("BinaryCrossentropy", from_logits=True, label_smoothing=0.0,
                                    axis=1)),
                       ("ignore_class", obj("SparseCategoricalCrossentropy", from_logits=True,
                                            ignore_class=0)),
                       ("reduction", dict(obj("CategoricalCrossentropy", from_logits=True),
                                          config={"name": "l", "reduction": "sum",
                                                  "from_logits": True})),
                       ("mse", obj("MeanSquaredError", from_logits=True)),
                       ("not_bool", obj("CategoricalCrossentropy", from_logits="yes")),
                       # Keras takes from_logits's Python truth: 1 true, 0 and None false
                       ("one", obj("CategoricalCrossentropy", from_logits=1)),
                       ("mse_null", obj("MeanSquaredError", from_logits=None))):
        def edit(cfg, loss=loss):
            out = cfg["config"]["layers"][-1]["config"]["name"]
            cfg["compile_config"] = {"loss": {out: cce} if loss == "OUT" else loss,
                                     "optimizer": "adam"}
        keras_rewrite("seed", f"lg_{name}.keras", d, edit)
    base = open(MODEL).read()
    for name, line in (("mse", "loss=mse from_logits=True optimizer=adam"),
                       ("bad", "loss=binary_crossentropy from_logits=yes optimizer=adam")):
        open(f"{d}/lg_{name}.model", "w").write(base + "compile " + line + "\n")
    open(f"{d}/lg_ok.model", "w").write(base + "compile loss=categorical_crossentropy "
                                        "from_logits=True optimizer=adam\n")


# name: (argv, exit, stderr regex, protected paths, setup(d) or None, env, after(d) or None)
CASES = {
    # bad data refused before anything is written
    "train_nan_input": (train("x_nan.npy"), 2, r"x_nan\.npy: sample 3 holds NaN at element 5", ["ckpt"], None, {}, None),
    "train_inf_input": (train("x_inf.npy"), 2, r"x_inf\.npy: sample 7 holds \+Inf", ["ckpt"], None, {}, None),
    "train_nan_labels": (train(y="y_nan.npy"), 2, r"y_nan\.npy: label of sample 2 is not one-hot: nan", ["ckpt"], None, {}, None),
    "train_negative_labels": (train(y="y_negative.npy"), 2, r"sample 5 is not one-hot: -1 at class 0", ["ckpt"], None, {}, None),
    "train_not_one_hot": (train(y="y_not_one_hot.npy"), 2, r"sample 6 is not one-hot: 0\.5", ["ckpt"], None, {}, None),
    "train_class_id_negative": (train(y="y_ids_negative.npy"), 2, r"label -1 of sample 9 is not a class id in 0\.\.4", ["ckpt"], None, {}, None),
    "train_diverges_keeps_checkpoint": (train("x_huge.npy"), 2, r"loss became (NaN|Inf) at epoch 1, step 1: training stopped; the last saved checkpoint is kept", ["ckpt"], None, {}, None),
    # the same on every backend: cl's loss kernels let a NaN probability
    # through their clip (OpenCL's clamp would turn it into eps, a finite loss)
    "train_diverges_keeps_checkpoint_cpu": ([*train("x_huge.npy")[:-2], "--device", "cpu"], 2, r"loss became (NaN|Inf) at epoch 1, step 1: training stopped; the last saved checkpoint is kept", ["ckpt"], None, {}, None),
    "train_diverges_keeps_checkpoint_cl": ([*train("x_huge.npy")[:-2], "--device", "cl"], 2, r"loss became (NaN|Inf) at epoch 1, step 1: training stopped; the last saved checkpoint is kept", ["ckpt"], None, {}, None),
    # XO_PREDICT_CHUNK (model.c predict_step) was ignored when not a count
    "predict_chunk_env_letters": (predict(), 2, r"XO_PREDICT_CHUNK='12x' is not a count of samples", ["out.npy"], None, {"XO_PREDICT_CHUNK": "12x"}, None),
    "predict_chunk_env_negative": (predict(), 2, r"XO_PREDICT_CHUNK='-3' is not a count of samples", ["out.npy"], None, {"XO_PREDICT_CHUNK": "-3"}, None),
    "predict_nan_input": (predict("x_nan.npy"), 2, r"x_nan\.npy: sample 3 holds NaN", ["out.npy"], None, {}, None),
    "predict_shape_names_file_shape": (predict("y.npy"), 2, r"y\.npy: shape \(40, 5\) does not match the model input \(34 values", ["out.npy"], None, {}, None),
    # integer class labels
    # `xo seed --model FILE --data X Y`: checked as train checks them
    "seed_data_shape": (seed(model=os.path.join(KERAS, "mlp.keras")), 2, r"x\.npy: shape \(40, 17, 2\) does not match the model input \(20 values per sample", [], None, {}, None),
    "seed_data_missing": (seed("nope.npy"), 2, r"nope\.npy: ", [], None, {}, None),
    "seed_data_nan": (seed("x_nan.npy"), 2, r"x_nan\.npy: sample 3 holds NaN at element 5", [], None, {}, None),
    "seed_data_not_one_hot": (seed(y="y_not_one_hot.npy"), 2, r"sample 6 is not one-hot: 0\.5", [], None, {}, None),
    "seed_data_label_range": (seed(y="y_int_range.npy"), 2, r"y_int_range\.npy: label 7 of sample 4 is not a class id in 0\.\.4", [], None, {}, None),
    "seed_data_one_file": (seed(y=None), 2, r"xo seed: --data needs two files: X\.npy Y\.npy", [], None, {}, None),
    "seed_model_missing": (seed(model="nope.keras"), 2, r"nope\.keras: cannot open", [], None, {}, None),
    "seed_model_unsupported": (seed(model=os.path.join(KERAS, "unsupported_layer.keras")), 2, r"unsupported_layer\.keras: layer .* is not supported", [], None, {}, None),
    "seed_data_class_ids": (seed(y="y_int64.npy"), 0, None, ["ckpt"], None, {}, None),
    "train_int32_labels": (train(y="y_int32.npy", save="new_int32"), 0, None, ["ckpt"], None, {}, None),
    "train_int64_labels": (train(y="y_int64.npy", save="new_int64"), 0, None, ["ckpt"], None, {}, None),
    "train_int_label_out_of_range": (train(y="y_int_range.npy"), 2, r"y_int_range\.npy: label 7 of sample 4 is not a class id in 0\.\.4", ["ckpt"], None, {}, None),
    "train_int_label_negative": (train(y="y_int_negative.npy"), 2, r"label -2 of sample 4 is not a class id", ["ckpt"], None, {}, None),
    "train_int_label_at_classes": (train(y="y_int_at_classes.npy"), 2, r"y_int_at_classes\.npy: label 5 of sample 4 is not a class id in 0\.\.4", ["ckpt"], None, {}, None),
    "train_int_label_last_at_classes": (train(y="y_int_last_at_classes.npy"), 2, r"label 5 of sample 39 is not a class id in 0\.\.4", ["ckpt"], None, {}, None),
    "train_class_id_at_classes": (train(y="y_ids_at_classes.npy"), 2, r"label 5 of sample 39 is not a class id in 0\.\.4", ["ckpt"], None, {}, None),
    "seed_data_label_at_classes": (seed(y="y_int_at_classes.npy"), 2, r"label 5 of sample 4 is not a class id in 0\.\.4", [], None, {}, None),
    "train_int_label_top_class": (train(y="y_int_top.npy", save="new_top"), 0, None, ["ckpt"], None, {}, None),
    # embedding models and integer ids
    "emb_mask_zero_refused": (train("x_ids32.npy", "y.npy", "ckpt", "--model", "mask_softmax.model"), 2, r"mask_softmax\.model:4: layer 'softmax': the mask of Embedding\(mask_zero=True\) reaches this Softmax layer, which uses it in Keras; masks are not supported for Softmax$", ["ckpt"], None, {}, None),
    "emb_mask_into_bn": (train("x_ids32.npy", "y.npy", "ckpt", "--model", "mask_bn.model"), 2, r"mask_bn\.model:3: layer 'batch_normalization': the mask of Embedding\(mask_zero=True\) reaches this BatchNormalization layer, which uses it in Keras; masks are not supported for BatchNormalization$", ["ckpt"], None, {}, None),
    "emb_mask_into_concatenate": (train("x_ids32.npy", "y.npy", "ckpt", "--model", "mask_concat.model"), 2, r"mask_concat\.model:4: layer 'concatenate': the mask of Embedding\(mask_zero=True\) reaches this Concatenate on axis 1: Keras joins the inputs' masks along that axis, a mask xo does not carry \(masked inputs are supported on the last axis\)$", ["ckpt"], None, {}, None),
    "emb_mask_through_time_distributed": (train("x_ids32.npy", "y.npy", "new_mask_td", "--model", "mask_td.model"), 0, None, ["ckpt"], None, {}, None),
    "emb_mask_dropped_by_flatten": (train("x_ids32.npy", "y.npy", "new_mask", "--model", "mask_flatten.model"), 0, None, ["ckpt"], None, {}, None),
    "emb_float_input_refused": (train("x_ids32.npy", "y.npy", "ckpt", "--model", "emb_float_input.model"), 2, r"embedding needs integer ids: the input line must say dtype=int32", ["ckpt"], None, {}, None),
    "emb_int_input_feeds_dense": (train("x_ids32.npy", "y.npy", "ckpt", "--model", "emb_int_dense.model"), 2, r"an input of dtype=int32 feeds only an embedding layer \(got dense\)", ["ckpt"], None, {}, None),
    "emb_id_out_of_range": (train("x_ids_range.npy", "y.npy", "ckpt", "--model", "emb.model"), 2, r"x_ids_range\.npy: id 50 of sample 6, step 5 is outside \[0, input_dim=50\) of embedding 'embedding'", ["ckpt"], None, {}, None),
    "emb_id_negative": (train("x_ids_negative.npy", "y.npy", "ckpt", "--model", "emb.model"), 2, r"x_ids_negative\.npy: id -3 of sample 6, step 5 is outside", ["ckpt"], None, {}, None),
    "emb_float_ids_refused": (train("x_ids_float.npy", "y.npy", "ckpt", "--model", "emb.model"), 2, r"x_ids_float\.npy: float values for the int32 ids of embedding 'embedding'", ["ckpt"], None, {}, None),
    "emb_int_x_for_float_model": (train("x_int_per.npy"), 2, r"x_int_per\.npy: integer \(int32\) values for a float32 model input", ["ckpt"], None, {}, None),
    "emb_seed_id_out_of_range": (seed("x_ids_range.npy", "y.npy", "emb.model"), 2, r"x_ids_range\.npy: id 50 of sample 6, step 5 is outside", [], None, {}, None),
    "emb_train_int32_ids": (train("x_ids32.npy", "y.npy", "new_emb", "--model", "emb.model"), 0, None, ["ckpt"], None, {}, None),
    # files that are not plain files
    "predict_output_fifo": (predict(out="fifo"), 2, r"fifo: is a FIFO, not a regular file", ["fifo"], None, {}, None),
    "predict_output_dev_null": (predict(out="/dev/null"), 2, r"/dev/null: is a character device", ["/dev/null"], None, {}, None),
    "model_is_fifo": (predict(model="fifo"), 2, r"fifo: not a regular file \(a FIFO\), not a model spec", ["out.npy", "fifo"], None, {}, None),
    "predict_output_directory": (predict(out="adir"), 2, r"adir: is a directory", ["adir"], None, {}, None),
    "predict_output_symlink": (predict(out="link.npy"), 0, None, ["link.npy"], None, {}, "link_target_is_npy"),
    "train_save_is_user_directory": (train(save="userdir"), 2, r"userdir: holds 'notes\.txt', which is not a checkpoint file", ["userdir"], None, {}, None),
    "train_save_dir_holds_npy_named_dir": (train(save="userdir2"), 2, r"userdir2: holds 'data\.npy', which is not a checkpoint file", ["userdir2"], None, {}, None),
    "train_save_through_symlink": (train(save="cklink"), 0, None, ["cklink"], None, {}, "cklink_is_checkpoint"),
    "train_save_symlink_trailing_slash": (train(save="cklink/"), 0, None, ["cklink"], None, {}, "cklink_is_checkpoint"),
    "predict_output_in_missing_directory": (predict(out="nodir/out.npy"), 2, r"nodir/out\.npy: cannot create: directory nodir does not exist", [], None, {}, None),
    "train_save_is_fifo": (train(save="fifo"), 2, r"fifo: is a FIFO, not a directory", ["fifo"], None, {}, None),
    # atomic checkpoints: a kill mid-save, and mixed or partial ones on load
    "checkpoint_kill_mid_save": (train(), 86, None, ["ckpt"], None, {"XO_TEST_CRASH_AFTER": "2"}, "kill_leaves_loadable"),
    "checkpoint_kill_before_swap": (train(), 86, None, ["ckpt"], None, {"XO_TEST_CRASH_AFTER": "6"}, "kill_leaves_loadable"),
    "checkpoint_mixed": (predict(), 2, r"ckpt: mixed or partial checkpoint: dense\.kernel\.npy", ["out.npy"], mix, {}, None),
    "checkpoint_truncated_file": (predict(), 2, r"ckpt: mixed or partial checkpoint: dense\.kernel\.npy", ["out.npy"], truncate, {}, None),
    "checkpoint_missing_file": (predict(), 2, r"ckpt: partial checkpoint: dense\.bias\.npy .* is missing", ["out.npy"], drop_file, {}, None),
    "checkpoint_manifest_truncated": (predict(), 2, r"xo-checkpoint\.txt is truncated", ["out.npy"], cut_manifest, {}, None),
    "checkpoint_extra_file": (predict(), 2, r"mixed checkpoint: old_layer\.kernel\.npy is not named", ["out.npy"], stray, {}, None),
    "checkpoint_old_writer_killed": (predict(), 2, r"ckpt: partial checkpoint: dense\.bias\.npy\.tmp is left from an interrupted save", ["out.npy"], old_writer_killed, {}, None),
    # Keras files
    "keras_truncated_zip": (kpredict("trunc.keras"), 2, r"trunc\.keras: not a readable \.keras archive", ["out.npy"], keras_truncated, {}, None),
    "keras_duplicate_member": (kpredict("dup.keras"), 2, r"dup\.keras: not a readable \.keras archive \(a member name appears twice; Keras's zipfile would read the last one\)$", ["out.npy"], keras_dup_member, {}, None),
    "keras_zip_without_config": (kpredict("noconf.keras"), 2, r"noconf\.keras: not a Keras archive: no config\.json in it", ["out.npy"], keras_no_config, {}, None),
    "keras_config_not_json": (kpredict("badjson.keras"), 2, r"badjson\.keras: bad model config JSON", ["out.npy"], keras_bad_json, {}, None),
    "keras_pool2d_channels_first": (kpredict("cfirst.keras"), 2, r"cfirst\.keras: layer 'max_pooling2d' \(MaxPooling2D\): data_format: only channels_last is supported", ["out.npy"], keras_channels_first, {}, None),
    "keras_weights_wrong_shape": (kpredict(os.path.join(KERAS, "mlp.keras"), os.path.join(KERAS, "seed.legacy_weights.h5")), 2, r"seed\.legacy_weights\.h5: layer 'conv1d': kernel has shape \(3, 1, 16\), the model needs \(20, 24\)", ["out.npy"], kx_flat(20), {}, None),
    "keras3_weights_of_another_model": (kpredict(os.path.join(KERAS, "mlp.keras"), os.path.join(KERAS, "seed.weights.h5")), 2, r"seed\.weights\.h5: layer 'hidden': kernel has shape \(64, 32\), the model needs \(20, 24\)", ["out.npy"], kx_flat(20), {}, None),
    "keras_truncated_weights_h5": (kpredict(os.path.join(KERAS, "seed.keras"), "trunc.weights.h5"), 2, r"trunc\.weights\.h5: not a readable HDF5 file", ["out.npy"], keras_truncated_h5, {}, None),
    "keras_unsupported_layer": (kpredict(os.path.join(KERAS, "unsupported_layer.keras")), 2, r"unsupported_layer\.keras: layer 'conv3d' \(Conv3D\) is not supported", ["out.npy"], keras_inputs, {}, None),
    # untrusted Keras files (model/h5read.c): the reader's child crashes or hangs, indirection, bad values
    "keras_reader_crash": (kpredict(os.path.join(KERAS, "seed.keras")), 2, r"seed\.keras: HDF5 reader crashed \(signal 11\) on this file", ["out.npy"], keras_inputs, {"XO_HDF5_READER_FAULT": "segv"}, None),
    "keras_reader_hang": (kpredict(os.path.join(KERAS, "seed.h5")), 2, r"seed\.h5: HDF5 reader (timed out after 1 s|ran out of CPU time \(1 s\))", ["out.npy"], keras_inputs, {"XO_HDF5_READER_FAULT": "spin", "XO_HDF5_DEADLINE_S": "1"}, None),
    "keras_libhdf5_hang": (kpredict(os.path.join(HOSTILE, "libhdf5-hang-b.h5")), 2, r"libhdf5-hang-b\.h5: HDF5 reader (timed out after 1 s|ran out of CPU time)", ["out.npy"], keras_inputs, {"XO_HDF5_DEADLINE_S": "1"}, None),
    "keras_external_link": (kpredict(os.path.join(HOSTILE, "external-link.h5")), 2, r"external-link\.h5: 'model_weights/dense/dense' is an external link \(to another file\): refused", ["out.npy"], keras_inputs, {}, None),
    "keras_external_storage": (kpredict(os.path.join(HOSTILE, "external-storage-etc-passwd.h5")), 2, r"external-storage-etc-passwd\.h5: dataset 'model_weights/dense/dense/kernel:0' has external raw-data storage", ["out.npy"], keras_inputs, {}, None),
    "keras_nan_weight": (kpredict(os.path.join(HOSTILE, "nan-weight.h5")), 2, r"nan-weight\.h5: layer 'dense': kernel holds NaN at index 4", ["out.npy"], kx_flat(7), {}, None),
    "keras_float64_beyond_float32": (kpredict(os.path.join(HOSTILE, "float64-1e300.h5")), 2, r"float64-1e300\.h5: layer 'dense': kernel holds an infinite or beyond-float32 value at index 4", ["out.npy"], kx_flat(7), {}, None),
    "keras_config_larger_than_file": (kpredict(os.path.join(HOSTILE, "config-72M-params-file-24.h5")), 2, r"config-72M-params-file-24\.h5: the config declares 72009000 parameters, the file stores 24 weight values", ["out.npy"], kx_flat(8000), {"XO_MODEL_PARAMS_MAX": "134217728"}, None),
    # the same file under the default parameter limit (2^25)
    "keras_config_over_params_limit": (kpredict(os.path.join(HOSTILE, "config-72M-params-file-24.h5")), 2, r"config-72M-params-file-24\.h5: the config declares more than 33554432 parameters, the limit for a model file", ["out.npy"], keras_inputs, {}, None),
    # Conv2D options crossover does not run: refused by name (layer, class, option)
    "keras_conv2d_channels_first": (kpredict("c2d_cfirst.keras"), 2, r"c2d_cfirst\.keras: layer 'conv2d' \(Conv2D\): data_format: only channels_last is supported", ["out.npy"], keras_conv2d_edit("data_format", "channels_first", "c2d_cfirst.keras"), {}, None),
    "keras_conv2d_groups": (kpredict("c2d_groups.keras"), 2, r"c2d_groups\.keras: layer 'conv2d' \(Conv2D\): groups: only 1 is supported", ["out.npy"], keras_conv2d_edit("groups", 2, "c2d_groups.keras"), {}, None),
    "keras_conv2d_regularizer": (kpredict("c2d_reg.keras"), 2, r"c2d_reg\.keras: layer 'conv2d' \(Conv2D\): kernel_regularizer is not supported", ["out.npy"], keras_conv2d_edit("kernel_regularizer", {"module": "keras.regularizers", "class_name": "L2", "config": {"l2": 0.01}, "registered_name": None}, "c2d_reg.keras"), {}, None),
    "keras_conv2d_constraint": (kpredict("c2d_con.keras"), 2, r"c2d_con\.keras: layer 'conv2d' \(Conv2D\): bias_constraint is not supported", ["out.npy"], keras_conv2d_edit("bias_constraint", {"module": "keras.constraints", "class_name": "NonNeg", "config": {}, "registered_name": None}, "c2d_con.keras"), {}, None),
    # an activation Keras 3 has and crossover does not (hard_silu): refused by name, never run as another
    "keras_conv2d_activation_hard_silu": (kpredict("c2d_hsilu.keras"), 2, r"c2d_hsilu\.keras.*activation=hard_silu: expected None, linear, .*relu6, hard_sigmoid, silu \(swish\), log_softmax or leaky_relu", ["out.npy"], keras_conv2d_edit("activation", "hard_silu", "c2d_hsilu.keras"), {}, None),
    "keras_conv2d_strides_with_dilation": (kpredict("c2d_sd.keras"), 2, r"c2d_sd\.keras.*conv2d: strides > 1 with dilation_rate > 1 is not allowed \(Keras\)", ["out.npy"], keras_conv2d_edit("dilation_rate", [1, 2], "c2d_sd.keras", strides=[2, 1]), {}, None),
    "keras_unsupported_option": (kpredict(os.path.join(KERAS, "unsupported_option.keras")), 2, r"unsupported_option\.keras: layer '[a-z_0-9]+' \(Dense\): kernel_regularizer is not supported", ["out.npy"], keras_inputs, {}, None),
    # BatchNormalization options crossover does not run: refused by name (layer, class, option)
    "keras_bn_axis": (kpredict(os.path.join(KERAS, "bn_axis.keras")), 2, r"bn_axis\.keras: layer '[a-z_0-9]+': axis=1: only the last axis \(-1, or 2 for this rank-3 input\) is supported$", ["out.npy"], keras_inputs, {}, None),
    "keras_bn_synchronized": (kpredict(os.path.join(KERAS, "bn_synchronized.keras")), 2, r"bn_synchronized\.keras: layer '[a-z_0-9]+' \(BatchNormalization\): synchronized=true is not supported", ["out.npy"], keras_inputs, {}, None),
    "keras_bn_renorm": (kpredict(os.path.join(KERAS, "bn_renorm.keras")), 2, r"bn_renorm\.keras: layer '[a-z_0-9]+' \(BatchNormalization\): renorm=true is not supported", ["out.npy"], keras_inputs, {}, None),
    "keras_bn_regularizer": (kpredict(os.path.join(KERAS, "bn_regularizer.keras")), 2, r"bn_regularizer\.keras: layer '[a-z_0-9]+' \(BatchNormalization\): gamma_regularizer is not supported", ["out.npy"], keras_inputs, {}, None),
    "keras_bn_initializer": (kpredict(os.path.join(KERAS, "bn_initializer.keras")), 2, r"bn_initializer\.keras: layer '[a-z_0-9]+' \(BatchNormalization\): gamma_initializer: only Ones \(the default\) is supported", ["out.npy"], keras_inputs, {}, None),
    "keras_ln_axis": (kpredict(os.path.join(KERAS, "ln_axis.keras")), 2, r"ln_axis\.keras: layer '[a-z_0-9]+': axis=1: only the last axis \(-1, or 2 for this rank-3 input\) is supported$", ["out.npy"], keras_inputs, {}, None),
    "keras_ln_axes": (kpredict(os.path.join(KERAS, "ln_axes.keras")), 2, r"ln_axes\.keras: layer '[a-z_0-9]+' \(LayerNormalization\): axis: only -1 \(the last axis, channels\) is supported, got axis=\[1,2\]", ["out.npy"], keras_inputs, {}, None),
    "keras_ln_rms_scaling": (kpredict(os.path.join(KERAS, "ln_rms.keras")), 2, r"ln_rms\.keras: layer '[a-z_0-9]+' \(LayerNormalization\): rms_scaling=true is not supported", ["out.npy"], keras_inputs, {}, None),
    "keras_ln_regularizer": (kpredict(os.path.join(KERAS, "ln_regularizer.keras")), 2, r"ln_regularizer\.keras: layer '[a-z_0-9]+' \(LayerNormalization\): gamma_regularizer is not supported", ["out.npy"], keras_inputs, {}, None),
    "keras_weights_file_as_model": (kpredict(os.path.join(KERAS, "seed.weights.h5")), 2, r"seed\.weights\.h5: an HDF5 file without model_config: a weights file", ["out.npy"], keras_inputs, {}, None),
    "keras_save_legacy_h5": (train(save="out.h5"), 2, r"out\.h5: xo writes \.weights\.h5 \(Keras 3 save_weights\) or \.keras, not a legacy \.h5", ["out.h5"], None, {}, None),
    # compile: labels checked per loss, unknown loss/optimizer/key refused
    "compile_sparse_label_out_of_range": (trainm("sparse.model", "y_ids7.npy"), 2, r"y_ids7\.npy: label 7 of sample 4 is not a class id in 0\.\.4 \(sparse_categorical_crossentropy\)", ["ckpt"], compile_files, {}, None),
    "compile_sparse_one_hot_labels": (trainm("sparse.model"), 2, r"y\.npy: shape \(40, 5\) does not fit: sparse_categorical_crossentropy needs class ids \(n,\)", ["ckpt"], compile_files, {}, None),
    "compile_binary_label_above_1": (trainm("binary.model", "y_bin15.npy"), 2, r"y_bin15\.npy: label of sample 6 holds 1\.5 at index 2 \(binary_crossentropy needs values in \[0, 1\]\)", ["ckpt"], compile_files, {}, None),
    "compile_mse_label_nan": (trainm("mse.model", "y_mse_nan.npy"), 2, r"y_mse_nan\.npy: label of sample 3 holds nan at index 1 \(mean_squared_error needs finite values\)", ["ckpt"], compile_files, {}, None),
    "compile_key_not_of_optimizer": (trainm("badkey.model"), 2, r"badkey\.model:\d+: compile: momentum is not an argument of optimizer adam", ["ckpt"], compile_files, {}, None),
    "compile_unknown_loss": (trainm("badloss.model"), 2, r"badloss\.model:\d+: compile: unknown loss 'hinge'", ["ckpt"], compile_files, {}, None),
    "compile_unknown_optimizer": (trainm("badopt.model"), 2, r"badopt\.model:\d+: compile: unknown optimizer 'adagrad'", ["ckpt"], compile_files, {}, None),
    # from_logits=True is Keras's own loss (docs/model.md compile_config): read, predicted
    "keras_compile_from_logits": (kpredict("cc_from_logits.keras"), 0, None, [], compile_files, {}, None),
    "keras_compile_loss_number": (kpredict("cc_loss_number.keras"), 2, r"cc_loss_number\.keras: compile_config: loss: expected a loss name or a Loss object$", ["out.npy"], compile_files, {}, None),
    "keras_compile_clipnorm": (kpredict("cc_clipnorm.keras"), 2, r"cc_clipnorm\.keras: compile_config: optimizer SGD: clipnorm is not supported", ["out.npy"], compile_files, {}, None),
    "keras_compile_custom_loss": (kpredict("cc_custom_loss.keras"), 2, r"cc_custom_loss\.keras: compile_config: loss: class 'CategoricalCrossentropy' is a custom class \('mypkg>CategoricalCrossentropy'\)", ["out.npy"], compile_files, {}, None),
    "keras_compile_custom_optimizer": (kpredict("cc_custom_opt.keras"), 2, r"cc_custom_opt\.keras: compile_config: optimizer: class 'SGD' is a custom class \('mypkg>SGD'\)", ["out.npy"], compile_files, {}, None),
    "keras_compile_unknown_optimizer": (kpredict("cc_adagrad.keras"), 2, r"cc_adagrad\.keras: compile_config: optimizer 'Adagrad' is not supported", ["out.npy"], compile_files, {}, None),
    # control bytes from files never reach the terminal raw
    # headers NumPy refuses: an unterminated dict, a key it does not know
    "npy_header_unterminated": (predict("x_noterm.npy"), 2, r"x_noterm\.npy: npy header is not the dict NumPy writes", ["out.npy"], lambda d: raw_npy(f"{d}/x_noterm.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (40, 17, 2)", 40 * 34), {}, None),
    "npy_header_extra_key": (predict("x_extra.npy"), 2, r"x_extra\.npy: npy header is not the dict NumPy writes", ["out.npy"], lambda d: raw_npy(f"{d}/x_extra.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (40, 17, 2), 'x': 1, }", 40 * 34), {}, None),
    "npy_header_numpy_form": (predict("x_np.npy"), 0, None, [], lambda d: raw_npy(f"{d}/x_np.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (40, 17, 2), }", 40 * 34), {}, None),
    "npy_descr_control_bytes": (predict("x_esc.npy"), 2, r"dtype '<f4\\x1b\[31m\\x0aX' is not supported", ["out.npy"], None, {}, None),
    "spec_control_bytes": (predict(model="esc.model"), 2, r"esc\.model:2: .*\\x1b", ["out.npy"], None, {}, None),
    # ... nor from the command line (a usage error quotes the value)
    "argv_control_bytes": (["check", "--op", "re\x1b[31mlu\nx"], 2, r"unknown op 're\\x1b\[31mlu\\x0ax'", [], None, {}, None),
    "argv_option_control_bytes": (["train", "--b\x1bogus"], 2, r"unknown option.*'--b\\x1bogus'", [], None, {}, None),
    # geometry from a file, range-checked before arithmetic
    "spec_rank3_dense_output": (["train", "--model", "rank3_dense.model", "--x", "x3d.npy", "--y", "y3d.npy", "--save", "ckpt3", "--epochs", "1", "--batch-size", "4", "--device", "ref"], 2, r"fit: loss mean_squared_error needs a flat output per sample; the last layer's output has 3 axes", ["ckpt3"], None, {}, None),
    "spec_rank3_conv1d": (predict(model="rank3_conv1d.model"), 2, r"rank3_conv1d\.model:2: conv1d needs a \[steps\]\[channels\] input, got \[6\]\[5\]\[2\]", ["out.npy"], None, {}, None),
    "spec_conv2d_on_rank2": (predict(model="c2d_rank2.model"), 2, r"c2d_rank2\.model:2: conv2d needs a \[height\]\[width\]\[channels\] input, got \[17\]\[2\]", ["out.npy"], None, {}, None),
    "spec_conv2d_output_empty": (predict(model="c2d_empty.model"), 2, r"c2d_empty\.model:2: conv2d: receptive field 7 \(dilation_w\*\(kernel_w-1\)\+1\) is longer than width=6 with padding=valid", ["out.npy"], None, {}, None),
    "spec_conv2d_strides_with_dilation": (predict(model="c2d_sd.model"), 2, r"c2d_sd\.model:2: conv2d: strides > 1 with dilation_rate > 1 is not allowed \(Keras\)", ["out.npy"], None, {}, None),
    # ZeroPadding1D: margins are non-negative integers, one or two; a [steps][channels] input
    "spec_zero_padding_negative": (predict(model="zp_negative.model"), 2, r"zp_negative\.model:2: padding=-1: expected a non-negative integer or two \(begin,end\)", ["out.npy"], None, {}, None),
    "spec_zero_padding_three": (predict(model="zp_three.model"), 2, r"zp_three\.model:2: padding=1,2,3: expected a non-negative integer or two", ["out.npy"], None, {}, None),
    "spec_zero_padding_rank3": (predict(model="zp_rank3.model"), 2, r"zp_rank3\.model:2: zero_padding1d needs a \[steps\]\[channels\] input, got \[8\]\[6\]\[1\]", ["out.npy"], None, {}, None),
    "spec_cropping_all": (predict(model="crop_all.model"), 2, r"crop_all\.model:2: cropping1d: cropping \(9, 8\) must be smaller than the input length 17", ["out.npy"], None, {}, None),
    "spec_permute_not_a_permutation": (predict(model="perm_repeat.model"), 2, r"perm_repeat\.model:2: Invalid permutation argument `dims` for Permute Layer", ["out.npy"], None, {}, None),
    "spec_graph_unknown_input": (predict(model="graph_unknown.model"), 2, r"graph_unknown\.model:3: inputs=nope: no earlier layer is named 'nope'", ["out.npy"], None, {}, None),
    "spec_graph_forward_reference": (predict(model="graph_forward.model"), 2, r"graph_forward\.model:2: inputs=b: no earlier layer is named 'b' \(a layer takes the outputs of layers above it, or 'input'\)", ["out.npy"], None, {}, None),
    "spec_graph_merge_shapes": (predict(model="graph_shapes.model"), 2, r"graph_shapes\.model:3: add: inputs of incompatible shapes: the last axis 3 and 2", ["out.npy"], None, {}, None),
    "spec_graph_two_outputs": (predict(model="graph_two_outputs.model"), 2, r"graph_two_outputs\.model:3: layer 'd': its output feeds no later layer", ["out.npy"], None, {}, None),
    "keras_mask_into_concatenate": (kpredict(os.path.join(KERAS, "mask_cat_t.keras")), 2, r"mask_cat_t\.keras: layer 'concatenate_\d+': the mask of Embedding\(mask_zero=True\) reaches this Concatenate on axis 1: Keras joins the inputs' masks along that axis, a mask xo does not carry \(masked inputs are supported on the last axis\)$", ["out.npy"], keras_inputs, {}, None),
    "keras_mask_kwarg_not_a_mask": (kpredict("m_notmask.keras"), 2, r"m_notmask\.keras: layer '[a-z_0-9]+' \(GlobalAveragePooling1D\): is called with a mask= that is not an Embedding\(mask_zero=True\)'s mask \(layer_normalization[_0-9]*\)$", ["out.npy"], keras_mask_edit("not_a_mask", "m_notmask.keras"), {}, None),
    "keras_mask_kwarg_unmasked": (kpredict("m_unmasked.keras"), 2, r"m_unmasked\.keras: layer '[a-z_0-9]+' \(GlobalAveragePooling1D\): is called with a mask= its input does not carry: not supported$", ["out.npy"], keras_mask_edit("unmasked", "m_unmasked.keras"), {}, None),
    "keras_graph_two_inputs": (kpredict("g_two_in.keras"), 2, r"xo predict: 1 input file for a model of 2 inputs \(input_layer, second\): one per model input, in its order$", ["out.npy"], keras_graph_edit("two_inputs", "g_two_in.keras"), {}, None),
    "keras_graph_shared_layer": (kpredict("g_shared.keras"), 2, r"g_shared\.keras: layer 'conv1d_2' \(Conv1D\): is called 2 times \(a shared layer\): not supported yet$", ["out.npy"], keras_graph_edit("shared", "g_shared.keras"), {}, None),
    "keras_graph_merge_three": (kpredict("g_three.keras"), 2, r"g_three\.keras: layer 'add' \(Add\): takes 3 tensors \(a merge of more than 2 is not supported yet\)$", ["out.npy"], keras_graph_edit("three", "g_three.keras"), {}, None),
    "keras_graph_outer_name": (kpredict("g_outer.keras"), 2, r"g_outer\.keras: layer 'conv1d_2' \(Conv1D\): its entry's name is not its config's name$", ["out.npy"], keras_graph_edit("outer_name", "g_outer.keras"), {}, None),
    "keras_graph_dup_name": (kpredict("g_dup.keras"), 2, r"g_dup\.keras: layer 'conv1d' \(Conv1D\): two layers have this name$", ["out.npy"], keras_graph_edit("dup_name", "g_dup.keras"), {}, None),
    "keras_graph_dead_layer": (kpredict("g_dead.keras"), 2, r"g_dead\.keras: layer 'conv1d_2': its output feeds no later layer \(the model's output is its last layer; a model with several outputs is not supported yet\)$", ["out.npy"], keras_graph_edit("dead", "g_dead.keras"), {}, None),
    "keras_graph_node_index_1": (kpredict("g_node1.keras"), 2, r"g_node1\.keras: layer 'add' \(Add\): inbound_nodes: expected the tensors it takes, each \[layer, 0, 0\] \(node 0, output 0: every layer is called once, with one output\)$", ["out.npy"], keras_graph_edit("node1", "g_node1.keras"), {}, None),
    "keras_mha_keyword_tensors": (kpredict("mha_kw.keras"), 2, r"mha_kw\.keras: layer 'multi_head_attention' \(MultiHeadAttention\): is called with the tensor query= as a keyword argument \(tensors are supported as positional arguments only\)$", ["out.npy"], keras_mha_keywords, {}, None),
    # Keras lowercases padding (standardize_padding): "SAME" is same
    # the ReLU layer: relu (max_value None) and relu6 (6) only; Softmax: the last axis
    "keras_rescaling_per_channel": (kpredict("resc_ch.keras"), 2, r"resc_ch\.keras: layer 'rescaling' \(Rescaling\): scale: a per-channel list is not supported \(one number only\)$", ["out.npy"], lambda d: keras_rewrite("rescale", "resc_ch.keras", d, lambda cfg: first_layer(cfg, "Rescaling")["config"].update(scale=[1.0, 2.0, 3.0])), {}, None),
    # Normalization: the last axis, no inverse, one number for a given mean
    # and variance (Keras's per-channel lists), both or neither; stored
    # variances of the model's shape, finite and >= 0
    "keras_normalization_invert": (kpredict("n_inv.keras"), 0, None, [], lambda d: (norm_edit("norm_mlp", "n_inv.keras", lambda c: c.update(invert=True))(d), kx_flat(6)(d)), {}, None),
    "keras_normalization_axis_none": (kpredict("n_axn.keras"), 2, r"n_axn\.keras: layer 'normalization' \(Normalization\): axis: only -1 \(the last axis, channels\) is supported, got axis=null$", ["out.npy"], norm_edit("norm_mlp", "n_axn.keras", lambda c: c.update(axis=None)), {}, None),
    "keras_normalization_two_axes": (kpredict("n_ax2.keras"), 2, r"n_ax2\.keras: layer 'normalization_1' \(Normalization\): axis: only -1 \(the last axis, channels\) is supported, got axis=\[1,2\]$", ["out.npy"], norm_edit("norm_conv", "n_ax2.keras", lambda c: c.update(axis=[1, 2])), {}, None),
    "keras_normalization_time_axis": (kpredict("n_ax1.keras"), 2, r"n_ax1\.keras: layer 'normalization_1': axis=1: only the last axis \(-1, or 2 for this rank-3 input\) is supported$", ["out.npy"], norm_edit("norm_conv", "n_ax1.keras", lambda c: c.update(axis=[1])), {}, None),
    "keras_normalization_mean_list": (kpredict("n_list.keras"), 2, r"n_list\.keras: layer 'normalization_2' \(Normalization\): mean: a per-channel list is not supported \(one number only\)$", ["out.npy"], norm_edit("norm_given", "n_list.keras", lambda c: c.update(mean=[0.1] * 5, variance=[1.0] * 5)), {}, None),
    "spec_normalization_mean_only": (predict(model="nm.model"), 2, r"nm\.model:2: normalization: mean and variance must be given together \(or neither: adapted, read from its weights\)$", ["out.npy"], lambda d: open(f"{d}/nm.model", "w").write("input 29 1\nnormalization mean=1\n"), {}, None),
    "spec_normalization_negative_variance": (predict(model="nv.model"), 2, r"nv\.model:2: variance=-1: a variance must be >= 0 \(Keras's root of a negative one is NaN\)$", ["out.npy"], lambda d: open(f"{d}/nv.model", "w").write("input 29 1\nnormalization mean=0 variance=-1\n"), {}, None),
    "weights_normalization_negative_variance": (predict(x="nx.npy", weights="nw", model="n.model"), 2, r"nw: normalization\.variance\.npy holds -0\.5 at index 1 \(a variance must be >= 0\)$", ["out.npy"], norm_weights([1.0, -0.5, 2.0]), {}, None),
    "weights_normalization_nan_variance": (predict(x="nx.npy", weights="nw", model="n.model"), 2, r"nw: normalization\.variance\.npy holds nan at index 2 \(a variance must be >= 0\)$", ["out.npy"], norm_weights([1.0, 2.0, float("nan")]), {}, None),
    "keras_normalization_negative_variance": (kpredict(os.path.join(KERAS, "norm_mlp.keras"), os.path.join(KERAS, "norm_negvar.weights.h5")), 2, r"norm_negvar\.weights\.h5: layer 'normalization': variance holds -0\.5 at index 2 \(a variance must be >= 0\)$", ["out.npy"], kx_flat(6), {}, None),
    "weights_normalization_wrong_shape": (predict(x="nx.npy", weights="nw", model="n.model"), 2, r"nw/normalization\.variance\.npy: shape \(4,\) does not match the expected \(3,\)$", ["out.npy"], norm_weights([1.0, 2.0, 2.0, 3.0]), {}, None),
    "spec_rescaling_no_scale": (predict(model="resc.model"), 2, r"resc\.model:2: rescaling needs scale=$", ["out.npy"], lambda d: open(f"{d}/resc.model", "w").write("input 29 1\nrescaling offset=1\n"), {}, None),
    "keras_relu_max_value": (kpredict("relu5.keras"), 2, r"relu5\.keras: layer 'activation': re_lu: max_value=5 is not supported \(None: relu, 6: relu6\)$", ["out.npy"], keras_activation_as("ReLU", {"max_value": 5.0, "negative_slope": 0.0, "threshold": 0.0}, "relu5.keras"), {}, None),
    "keras_relu_negative_slope": (kpredict("leaky.keras"), 2, r"leaky\.keras: layer 'activation': re_lu: negative_slope=0\.1 is not supported \(only 0\)$", ["out.npy"], keras_activation_as("ReLU", {"max_value": None, "negative_slope": 0.1, "threshold": 0.0}, "leaky.keras"), {}, None),
    "keras_relu_threshold": (kpredict("relu_thr.keras"), 2, r"relu_thr\.keras: layer 'activation': re_lu: threshold=0\.5 is not supported \(only 0\)$", ["out.npy"], keras_activation_as("ReLU", {"max_value": 6.0, "negative_slope": 0.0, "threshold": 0.5}, "relu_thr.keras"), {}, None),
    "keras_relu_ok": (kpredict("relu6.keras"), 0, None, [], keras_activation_as("ReLU", {"max_value": 6.0, "negative_slope": 0.0, "threshold": 0.0}, "relu6.keras"), {}, None),
    "keras_softmax_axis": (kpredict("smax_axis.keras"), 2, r"smax_axis\.keras: layer 'activation' \(Softmax\): axis: only -1 \(the last axis, channels\) is supported, got axis=0$", ["out.npy"], keras_activation_as("Softmax", {"axis": 0}, "smax_axis.keras"), {}, None),
    "keras_softmax_unknown_key": (kpredict("smax_key.keras"), 2, r"smax_key\.keras: layer 'activation' \(Softmax\): temperature is not supported$", ["out.npy"], keras_activation_as("Softmax", {"axis": -1, "temperature": 2.0}, "smax_key.keras"), {}, None),
    # LeakyReLU: a finite negative_slope >= 0 (Keras refuses a negative one); Keras 2's alpha read as it
    "keras_leaky_negative_slope": (kpredict("lk_neg.keras"), 2, r"lk_neg\.keras: layer 'activation': leaky_re_lu: negative_slope=-0\.1: expected a finite number >= 0$", ["out.npy"], keras_activation_as("LeakyReLU", {"negative_slope": -0.1}, "lk_neg.keras"), {}, None),
    "keras_leaky_slope_past_float": (kpredict("lk_big.keras"), 2, r"lk_big\.keras: layer 'activation': leaky_re_lu: negative_slope=1e\+39: expected a finite number >= 0$", ["out.npy"], keras_activation_as("LeakyReLU", {"negative_slope": 1e39}, "lk_big.keras"), {}, None),
    "keras_leaky_slope_null": (kpredict("lk_null.keras"), 2, r"lk_null\.keras: layer 'activation' \(LeakyReLU\): negative_slope: expected a number$", ["out.npy"], keras_activation_as("LeakyReLU", {"negative_slope": None}, "lk_null.keras"), {}, None),
    "keras_leaky_alpha_ok": (kpredict("lk_alpha.keras"), 0, None, [], keras_activation_as("LeakyReLU", {"alpha": 0.2}, "lk_alpha.keras"), {}, None),
    "spec_leaky_slope_inf": (predict(model="lk_inf.model"), 2, r"lk_inf\.model:3: leaky_re_lu: negative_slope=inf: expected a finite number >= 0$", ["out.npy"], lambda d: open(f"{d}/lk_inf.model", "w").write("input 29 1\nflatten\nleaky_re_lu negative_slope=inf\n"), {}, None),
    "spec_leaky_slope_nan": (predict(model="lk_nan.model"), 2, r"lk_nan\.model:3: leaky_re_lu: alpha=nan: expected a finite number >= 0$", ["out.npy"], lambda d: open(f"{d}/lk_nan.model", "w").write("input 29 1\nflatten\nleaky_re_lu alpha=nan\n"), {}, None),
    # ELU: any finite alpha, a negative one too (as Keras)
    "keras_elu_negative_alpha": (kpredict("elu_neg.keras"), 0, None, [], keras_activation_as("ELU", {"alpha": -1.0}, "elu_neg.keras"), {}, None),
    "keras_elu_alpha_null": (kpredict("elu_null.keras"), 2, r"elu_null\.keras: layer 'activation' \(ELU\): alpha: expected a number$", ["out.npy"], keras_activation_as("ELU", {"alpha": None}, "elu_null.keras"), {}, None),
    "spec_elu_alpha_inf": (predict(model="elu_inf.model"), 2, r"elu_inf\.model:3: elu: alpha=inf: expected a finite number$", ["out.npy"], lambda d: open(f"{d}/elu_inf.model", "w").write("input 29 1\nflatten\nelu alpha=inf\n"), {}, None),
    "keras_padding_upper_case": (kpredict("ct_same.keras"), 0, None, [], keras_layer_edit("convt", "Conv2DTranspose", "padding", "SAME", "ct_same.keras"), {}, None),
    "keras_padding_mixed_case": (kpredict("c1_valid.keras"), 0, None, [], keras_layer_edit("seed", "Conv1D", "padding", "Valid", "c1_valid.keras"), {}, None),
    # Keras's mirror of an LSTM carries a shared_object_id in its dtype policy: still the mirror
    "keras_bidirectional_backward_shared_dtype": (kpredict("bi_shared.keras"), 0, None, [], keras_bidir_edit("backward_layer", "dtype", {"module": "keras", "class_name": "DTypePolicy", "config": {"name": "float32"}, "registered_name": None, "shared_object_id": 140000000000001}, "bi_shared.keras"), {}, None),
    # None strides / dilation: Keras refuses them in a convolution (a pooling layer's strides None is its pool size)
    "keras_conv1d_strides_null": (kpredict("c1_snull.keras"), 2, r"c1_snull\.keras: layer 'conv1d' \(Conv1D\): strides: expected one positive integer \(Keras refuses None\)$", ["out.npy"], keras_layer_edit("seed", "Conv1D", "strides", None, "c1_snull.keras"), {}, None),
    "keras_conv2d_dilation_null": (kpredict("c2d_dnull.keras"), 2, r"c2d_dnull\.keras: layer 'conv2d' \(Conv2D\): dilation_rate: expected an integer or two \(height, width\) \(Keras refuses None\)$", ["out.npy"], keras_conv2d_edit("dilation_rate", None, "c2d_dnull.keras"), {}, None),
    "keras_pooling_strides_null": (kpredict("mp_snull.keras"), 0, None, [], keras_layer_edit("seed", "MaxPooling1D", "strides", None, "mp_snull.keras"), {}, None),
    "keras_graph_two_outputs": (kpredict("g_two_out.keras"), 2, r"g_two_out\.keras: several outputs \(2\): a multi-output model is not supported yet$", ["out.npy"], keras_graph_edit("two_outputs", "g_two_out.keras"), {}, None),
    # Masking: a finite mask_value; the first layer only, on a float input
    "spec_masking_nan": (predict(model="mk.model"), 2, r"mk\.model:2: mask_value=nan: expected a finite number \(float32\)$", ["out.npy"], lambda d: open(f"{d}/mk.model", "w").write("input 29 1\nmasking mask_value=nan\nflatten\ndense units=2\n"), {}, None),
    "spec_masking_not_first": (predict(model="mk.model"), 2, r"mk\.model:3: masking must be the first layer, on the model's input \(a Masking elsewhere is not supported\)$", ["out.npy"], lambda d: open(f"{d}/mk.model", "w").write("input 29 1\ndense units=4\nmasking\nflatten\ndense units=2\n"), {}, None),
    "spec_masking_int_input": (predict(model="mk.model"), 2, r"mk\.model:2: masking needs a float input \(the input line says dtype=int32\)$", ["out.npy"], lambda d: open(f"{d}/mk.model", "w").write("input 29 dtype=int32\nmasking\nflatten\ndense units=2\n"), {}, None),
    "spec_mha_dropout": (predict(model="mha_dropout.model"), 2, r"mha_dropout\.model:2: dropout=1\.0: expected a number in \[0, 1\)$", ["out.npy"], None, {}, None),
    "spec_mha_dropout_neg": (predict(model="mha_dropout_neg.model"), 2, r"mha_dropout_neg\.model:2: dropout=-0\.1: expected a number in \[0, 1\)$", ["out.npy"], None, {}, None),
    "keras_mha_dropout": (kpredict("mha_d1.keras"), 2, r"mha_d1\.keras: layer 'multi_head_attention': dropout=1: expected a number in \[0, 1\)$", ["out.npy"], keras_layer_edit("mha", "MultiHeadAttention", "dropout", 1.0, "mha_d1.keras"), {}, None),
    "keras_mha_dropout_neg": (kpredict("mha_dm.keras"), 2, r"mha_dm\.keras: layer 'multi_head_attention': dropout=-0\.1.*: expected a number in \[0, 1\)$", ["out.npy"], keras_layer_edit("mha", "MultiHeadAttention", "dropout", -0.1, "mha_dm.keras"), {}, None),
    "spec_mha_no_heads": (predict(model="mha_no_heads.model"), 2, r"mha_no_heads\.model:2: .*num_heads= and key_dim=", ["out.npy"], None, {}, None),
    "spec_mha_one_input": (predict(model="mha_one_input.model"), 2, r"mha_one_input\.model:2: multi_head_attention needs 2 inputs \(inputs=query,value", ["out.npy"], None, {}, None),
    "spec_permute_rank": (predict(model="perm_rank.model"), 2, r"perm_rank\.model:2: permute: dims=312 orders 3 axes; the input \[17\]\[2\] has 2", ["out.npy"], None, {}, None),
    "spec_repeat_vector_rank": (predict(model="repeat_rank.model"), 2, r"repeat_rank\.model:2: repeat_vector needs a flat \[features\] input, got \[17\]\[2\]", ["out.npy"], None, {}, None),
    "spec_reshape_size": (predict(model="reshape_size.model"), 2, r"reshape_size\.model:2: reshape: the total size of target_shape is different from the input's size 34", ["out.npy"], None, {}, None),
    "spec_reshape_two_unknown": (predict(model="reshape_two.model"), 2, r"reshape_two\.model:2: reshape: there must be at most one unknown dimension", ["out.npy"], None, {}, None),
    "spec_time_distributed_over_lstm": (predict(model="td_lstm.model"), 2, r"td_lstm\.model:2: layer=lstm: TimeDistributed over lstm is not supported \(Dense or Conv1D\)$", ["out.npy"], None, {}, None),
    "spec_time_distributed_conv1d_rank": (predict(model="td_conv1d_rank.model"), 2, r"td_conv1d_rank\.model:2: time_distributed over conv1d needs a \[T\]\[len\]\[channels\] input, got \[17\]\[2\]$", ["out.npy"], None, {}, None),
    "keras_time_distributed_over_conv2d": (kpredict("td_conv2d.keras"), 2, r"td_conv2d\.keras: layer 'time_distributed' \(TimeDistributed\): TimeDistributed over Conv2D is not supported \(Dense or Conv1D\)$", ["out.npy"], keras_layer_edit("td", "TimeDistributed", "layer", {"module": "keras.layers", "class_name": "Conv2D", "config": {"name": "conv2d", "filters": 2, "kernel_size": [1, 1]}, "registered_name": None}, "td_conv2d.keras"), {}, None),
    "keras_time_distributed_inner_groups": (kpredict("td_groups.keras"), 2, r"td_groups\.keras: layer 'time_distributed' \(TimeDistributed\): groups: only 1 is supported$", ["out.npy"], keras_td_inner_edit("groups", 2, "td_groups.keras"), {}, None),
    "keras_time_distributed_causal": (kpredict("td_causal.keras"), 2, r"td_causal\.keras.*padding=causal is not supported for time_distributed over conv1d \(valid or same\)$", ["out.npy"], keras_td_inner_edit("padding", "causal", "td_causal.keras"), {}, None),
    "keras_time_distributed_inner_unknown_key": (kpredict("td_key.keras"), 2, r"td_key\.keras: layer 'time_distributed' \(TimeDistributed\): layer: Conv1D: colour is not supported$", ["out.npy"], keras_td_inner_edit("colour", "red", "td_key.keras"), {}, None),
    "spec_bidirectional_over_dense": (predict(model="bi_dense.model"), 2, r"bi_dense\.model:2: layer=dense: Bidirectional over dense is not supported \(SimpleRNN, LSTM or GRU\)$", ["out.npy"], None, {}, None),
    "spec_bidirectional_merge_none": (predict(model="bi_none.model"), 2, r"bi_none\.model:2: merge_mode=None is not supported \(Bidirectional then returns two tensors; concat, sum, mul or ave\)$", ["out.npy"], None, {}, None),
    "spec_bidirectional_go_backwards": (predict(model="bi_back.model"), 2, r"bi_back\.model:2: go_backwards=True is not supported for bidirectional", ["out.npy"], None, {}, None),
    "keras_bidirectional_merge_none": (kpredict("bi_none.keras"), 2, r"bi_none\.keras: layer 'bidirectional' \(Bidirectional\): merge_mode=None is not supported \(Bidirectional then returns two tensors\)$", ["out.npy"], keras_bidir_edit(None, "merge_mode", None, "bi_none.keras"), {}, None),
    "keras_bidirectional_backward_not_mirror": (kpredict("bi_mirror.keras"), 2, r"bi_mirror\.keras: layer 'bidirectional' \(Bidirectional\): backward_layer: activation differs from layer's \(only the mirror of layer, go_backwards flipped, is supported\)$", ["out.npy"], keras_bidir_edit("backward_layer", "activation", "relu", "bi_mirror.keras"), {}, None),
    "keras_bidirectional_over_dense": (kpredict("bi_dense.keras"), 2, r"bi_dense\.keras: layer 'bidirectional' \(Bidirectional\): .*Bidirectional over Dense is not supported \(SimpleRNN, LSTM or GRU\)$", ["out.npy"], keras_layer_edit("bidir", "Bidirectional", "layer", {"module": "keras.layers", "class_name": "Dense", "config": {"name": "dense", "units": 3}, "registered_name": None}, "bi_dense.keras"), {}, None),
    "keras_bidirectional_inner_dropout": (kpredict("bi_drop.keras"), 2, r"bi_drop\.keras: layer 'bidirectional' \(Bidirectional\): dropout=0\.25 is not supported \(only 0\)$", ["out.npy"], keras_bidir_edit("layer", "dropout", 0.25, "bi_drop.keras"), {}, None),
    "spec_up_sampling_zero": (predict(model="up_zero.model"), 2, r"up_zero\.model:2: size=0: expected a positive integer", ["out.npy"], None, {}, None),
    # DepthwiseConv2D: what crossover does not run is refused by name
    "keras_dwconv_dilation": (kpredict("dw_dil.keras"), 2, r"dw_dil\.keras: layer 'depthwise_conv2d': depthwise_conv2d: dilation_rate=2, dilation_w=2 is not supported \(1 only\)$", ["out.npy"], keras_layer_edit("dwconv", "DepthwiseConv2D", "dilation_rate", [2, 2], "dw_dil.keras"), {}, None),
    "keras_dwconv_regularizer": (kpredict("dw_reg.keras"), 2, r"dw_reg\.keras: layer 'depthwise_conv2d' \(DepthwiseConv2D\): depthwise_regularizer is not supported$", ["out.npy"], keras_layer_edit("dwconv", "DepthwiseConv2D", "depthwise_regularizer", {"module": "keras.regularizers", "class_name": "L2", "config": {"l2": 0.01}, "registered_name": None}, "dw_reg.keras"), {}, None),
    "keras_dwconv_channels_first": (kpredict("dw_cf.keras"), 2, r"dw_cf\.keras: layer 'depthwise_conv2d' \(DepthwiseConv2D\): data_format: only channels_last is supported$", ["out.npy"], keras_layer_edit("dwconv", "DepthwiseConv2D", "data_format", "channels_first", "dw_cf.keras"), {}, None),
    "keras_dwconv_multiplier_zero": (kpredict("dw_dm0.keras"), 2, r"dw_dm0\.keras: layer 'depthwise_conv2d': depth_multiplier=0: expected a positive integer$", ["out.npy"], keras_layer_edit("dwconv", "DepthwiseConv2D", "depth_multiplier", 0, "dw_dm0.keras"), {}, None),
    "keras_dwconv1d_causal": (kpredict("dw1_causal.keras"), 2, r"dw1_causal\.keras: layer 'depthwise_conv1d': padding=causal: expected valid or same$", ["out.npy"], keras_layer_edit("dwconv1d", "DepthwiseConv1D", "padding", "causal", "dw1_causal.keras"), {}, None),
    "keras_sepconv_activation_tanh": (kpredict("sep_tanh.keras"), 2, r"sep_tanh\.keras: layer 'separable_conv2d': separable_conv2d: activation=tanh is not supported \(linear, relu, sigmoid or softmax\)$", ["out.npy"], keras_layer_edit("sepconv", "SeparableConv2D", "activation", "tanh", "sep_tanh.keras"), {}, None),
    "keras_sepconv_pointwise_regularizer": (kpredict("sep_reg.keras"), 2, r"sep_reg\.keras: layer 'separable_conv2d' \(SeparableConv2D\): pointwise_regularizer is not supported$", ["out.npy"], keras_layer_edit("sepconv", "SeparableConv2D", "pointwise_regularizer", {"module": "keras.regularizers", "class_name": "L2", "config": {"l2": 0.01}, "registered_name": None}, "sep_reg.keras"), {}, None),
    "keras_sepconv1d_dilation": (kpredict("sep1_dil.keras"), 2, r"sep1_dil\.keras: layer 'separable_conv1d': separable_conv1d: dilation_rate=2 is not supported \(1 only\)$", ["out.npy"], keras_layer_edit("sepconv1d", "SeparableConv1D", "dilation_rate", [2], "sep1_dil.keras"), {}, None),
    # a 1-D or separable layer's refusals name its own kind and keys, not
    # the depthwise_conv2d op it runs as
    "keras_dwconv1d_dilation": (kpredict("dw1_dil.keras"), 2, r"dw1_dil\.keras: layer 'depthwise_conv1d': depthwise_conv1d: dilation_rate=2 is not supported \(1 only\)$", ["out.npy"], keras_layer_edit("dwconv1d", "DepthwiseConv1D", "dilation_rate", [2], "dw1_dil.keras"), {}, None),
    "keras_sepconv2d_dilation": (kpredict("sep2_dil.keras"), 2, r"sep2_dil\.keras: layer 'separable_conv2d': separable_conv2d: dilation_rate=2, dilation_w=2 is not supported \(1 only\)$", ["out.npy"], keras_layer_edit("sepconv", "SeparableConv2D", "dilation_rate", [2, 2], "sep2_dil.keras"), {}, None),
    "spec_sepconv1d_dilation": (predict(model="sep1_dil.model"), 2, r"sep1_dil\.model:2: separable_conv1d: dilation_rate=2 is not supported \(1 only\)$", ["out.npy"], None, {}, None),
    "spec_sepconv1d_kernel_long": (predict(model="sep1_long.model"), 2, r"sep1_long\.model:2: separable_conv1d: receptive field 30 \(dilation_rate\*\(kernel_size-1\)\+1\) is longer than len=17 with padding=valid$", ["out.npy"], None, {}, None),
    "keras_cropping_negative": (kpredict("crop_neg.keras"), 2, r"crop_neg\.keras: layer 'cropping1d' \(Cropping1D\): cropping: expected a non-negative integer or two \(\[begin, end\]\)$", ["out.npy"], keras_layer_edit("resize1d", "Cropping1D", "cropping", [-1, 2], "crop_neg.keras"), {}, None),
    "keras_cropping_all": (kpredict("crop_all.keras"), 2, r"crop_all\.keras.*cropping1d: cropping \(30, 1\) must be smaller than the input length 15", ["out.npy"], keras_layer_edit("resize1d", "Cropping1D", "cropping", [30, 1], "crop_all.keras"), {}, None),
    "keras_up_sampling_size_list": (kpredict("up_list.keras"), 2, r"up_list\.keras: layer 'up_sampling1d' \(UpSampling1D\): size: expected a positive integer$", ["out.npy"], keras_layer_edit("resize1d", "UpSampling1D", "size", [2, 2], "up_list.keras"), {}, None),
    "spec_up_sampling_bilinear": (predict(model="up_bilinear.model"), 2, r"up_bilinear\.model:2: interpolation=bilinear is not supported \(only nearest\)", ["out.npy"], None, {}, None),
    "spec_cropping2d_all": (predict(model="crop2d_all.model"), 2, r"crop2d_all\.model:2: cropping2d: cropping \(\(1, 1\), \(3, 3\)\) must be smaller than the input's height 8 and width 6", ["out.npy"], None, {}, None),
    "keras_up_sampling_bilinear": (kpredict("up_bilinear.keras"), 2, r"up_bilinear\.keras.*interpolation=bilinear is not supported \(only nearest\)", ["out.npy"], keras_layer_edit("resize2d", "UpSampling2D", "interpolation", "bilinear", "up_bilinear.keras"), {}, None),
    "keras_cropping2d_channels_first": (kpredict("crop2d_cfirst.keras"), 2, r"crop2d_cfirst\.keras: layer 'cropping2d' \(Cropping2D\): data_format: only channels_last is supported", ["out.npy"], keras_layer_edit("resize2d", "Cropping2D", "data_format", "channels_first", "crop2d_cfirst.keras"), {}, None),
    "keras_zero_padding2d_three": (kpredict("zp2d_three.keras"), 2, r"zp2d_three\.keras: layer 'zero_padding2d' \(ZeroPadding2D\): padding: expected a non-negative integer or two \(height, width\), each an integer or \[begin, end\]$", ["out.npy"], keras_layer_edit("resize2d", "ZeroPadding2D", "padding", [[1, 2], [3]], "zp2d_three.keras"), {}, None),
    "keras_zero_padding_channels_first": (kpredict("zp_cfirst.keras"), 2, r"zp_cfirst\.keras: layer 'zero_padding1d' \(ZeroPadding1D\): data_format: only channels_last is supported", ["out.npy"], keras_layer_edit("pad1d", "ZeroPadding1D", "data_format", "channels_first", "zp_cfirst.keras"), {}, None),
    "keras_zero_padding_negative": (kpredict("zp_neg.keras"), 2, r"zp_neg\.keras: layer 'zero_padding1d' \(ZeroPadding1D\): padding: expected a non-negative integer or two \(\[begin, end\]\)$", ["out.npy"], keras_layer_edit("pad1d", "ZeroPadding1D", "padding", [1, -2], "zp_neg.keras"), {}, None),
    # forms Keras 3's constructors refuse (TypeError / ValueError), refused here too rather than given a meaning
    "keras_up_sampling_size_null": (kpredict("up_null.keras"), 2, r"up_null\.keras: layer 'up_sampling1d' \(UpSampling1D\): size: expected a positive integer$", ["out.npy"], keras_layer_edit("resize1d", "UpSampling1D", "size", None, "up_null.keras"), {}, None),
    "keras_up_sampling_size_negative": (kpredict("up_neg.keras"), 2, r"up_neg\.keras: layer 'up_sampling1d' \(UpSampling1D\): size: expected a positive integer$", ["out.npy"], keras_layer_edit("resize1d", "UpSampling1D", "size", -1, "up_neg.keras"), {}, None),
    "keras_up_sampling_size_zero": (kpredict("up_zero.keras"), 2, r"up_zero\.keras: layer 'up_sampling1d' \(UpSampling1D\): size: expected a positive integer$", ["out.npy"], keras_layer_edit("resize1d", "UpSampling1D", "size", 0, "up_zero.keras"), {}, None),
    "keras_up_sampling2d_size_one_list": (kpredict("up2d_one.keras"), 2, r"up2d_one\.keras: layer 'up_sampling2d' \(UpSampling2D\): size: expected a positive integer or two \(height, width\)$", ["out.npy"], keras_layer_edit("resize2d", "UpSampling2D", "size", [2], "up2d_one.keras"), {}, None),
    "keras_zero_padding2d_one_pair": (kpredict("zp2d_pair.keras"), 2, r"zp2d_pair\.keras: layer 'zero_padding2d' \(ZeroPadding2D\): padding: expected a non-negative integer or two \(height, width\), each an integer or \[begin, end\]$", ["out.npy"], keras_layer_edit("resize2d", "ZeroPadding2D", "padding", [[1, 1]], "zp2d_pair.keras"), {}, None),
    "keras_zero_padding2d_one_list": (kpredict("zp2d_one.keras"), 2, r"zp2d_one\.keras: layer 'zero_padding2d' \(ZeroPadding2D\): padding: expected a non-negative integer or two \(height, width\), each an integer or \[begin, end\]$", ["out.npy"], keras_layer_edit("resize2d", "ZeroPadding2D", "padding", [1], "zp2d_one.keras"), {}, None),
    "keras_cropping2d_one_pair": (kpredict("crop2d_pair.keras"), 2, r"crop2d_pair\.keras: layer 'cropping2d' \(Cropping2D\): cropping: expected a non-negative integer or two \(height, width\), each an integer or \[begin, end\]$", ["out.npy"], keras_layer_edit("resize2d", "Cropping2D", "cropping", [[1, 1]], "crop2d_pair.keras"), {}, None),
    "spec_rank3_size_overflows": (predict(model="rank3_huge.model"), 2, r"rank3_huge\.model:1: input: size overflows", ["out.npy"], None, {}, None),
    "spec_conv1d_transpose_output_padding": (predict(model="ct1_op.model"), 2, r"ct1_op\.model:2: conv1d_transpose: output_padding=5 must be -1 \(None\) or in 0\.\.strides-1 \(1\)", ["out.npy"], None, {}, None),
    "spec_huge_strides": (predict(model="huge_strides.model"), 2, r"huge_strides\.model:2: .*strides=1099511627776 is above the limit", ["out.npy"], None, {}, None),
    "check_huge_strides": (["check", "--op", "conv1d", "len=29", "ch=1", "filters=2", "kernel_size=3",
                            "strides=9223372036854775807", "padding=same", "--backend", "ref"],
                           2, r"strides=9223372036854775807 is above the limit", [], None, {}, None),
    "check_attention_dropout": (["check", "--op", "attention", "len=5", "heads=2", "key_dim=4",
                                 "dropout=1", "--backend", "ref"],
                                2, r"^xo check: attention: dropout=1 must be in \[0, 1\)$", [], None, {}, None),
    "check_huge_pool": (["check", "--op", "max_pooling1d", "len=29", "ch=1", "pool_size=9223372036854775807",
                         "padding=same", "--backend", "ref"],
                        2, r"pool_size=9223372036854775807 is above the limit", [], None, {}, None),
    # multi-input models: the files counted, their rows and shapes checked
    "multi_input_count": (["train", "--model", "multi.model", "--x", "x.npy", "--y", "y.npy", "--save", "ckpt", "--epochs", "1", "--device", "ref"], 2, r"xo train: 1 input file for a model of 2 inputs \(a, b\): one per model input, in its order$", ["ckpt"], None, {}, None),
    "multi_input_rows": (["train", "--model", "multi.model", "--x", "x.npy", "--x", "x_b_rows.npy", "--y", "y.npy", "--save", "ckpt", "--epochs", "1", "--device", "ref"], 2, r"xo train: x_b_rows\.npy: 39 samples, but x\.npy has 40 \(every input needs one row per sample\)$", ["ckpt"], None, {}, None),
    "multi_input_shape": (["train", "--model", "multi.model", "--x", "x.npy", "--x", "x_b_shape.npy", "--y", "y.npy", "--save", "ckpt", "--epochs", "1", "--device", "ref"], 2, r"xo train: x_b_shape\.npy: shape \(40, 4\) does not match input 'b' \(3 values per sample, first axis = samples\); want \(n, 3\)$", ["ckpt"], None, {}, None),
    "multi_input_b_3d": (["train", "--model", "multi.model", "--x", "x.npy", "--x", "x_b_3d.npy", "--y", "y.npy", "--save", "ckpt", "--epochs", "1", "--device", "ref"], 2, r"xo train: x_b_3d\.npy: shape \(40, 1, 3\) does not match input 'b' \(3 values per sample, first axis = samples\); want \(n, 3\)$", ["ckpt"], None, {}, None),
    # a file of the model input's size in another shape is refused, never
    # read as the input's shape (predict, train and seed: one rule)
    "predict_input_transposed": (predict("x_transposed.npy"), 2, r"xo predict: x_transposed\.npy: shape \(40, 2, 17\) does not match the model input \(34 values per sample, first axis = samples\); want \(n, 17, 2\) or \(n, 34\)$", ["out.npy"], None, {}, None),
    "train_input_transposed": (train("x_transposed.npy"), 2, r"xo train: x_transposed\.npy: shape \(40, 2, 17\) does not match the model input", ["ckpt"], None, {}, None),
    "seed_input_transposed": (seed("x_transposed.npy"), 2, r"xo seed: x_transposed\.npy: shape \(40, 2, 17\) does not match the model input", [], None, {}, None),
    # the activation buffers bounded before they are allocated (half the
    # machine's memory by default; 1 MB here, where its plan needs 20 MB)
    "predict_activations_over_limit": (predict("x_long.npy", model="long_seq.model"), 2, r"xo predict: long_seq\.model: its activations need 0\.00\d+ GiB for 2 samples \(0\.61 MiB a sample\), above the limit of 0\.000931 GiB", ["out.npy"], None, {"XO_MODEL_MEMORY_MAX": "1000000"}, None),
    # a member compressed by a method libzip lacks here is named as such,
    # not as a corrupt archive
    "keras_lzma_config": (kpredict("lzma.keras"), 2, r"xo predict: lzma\.keras: member 'config\.json' uses compression method 14 \(LZMA\), which this build cannot read; re-save it stored or deflated$", ["out.npy"], lambda d: keras_lzma(d, "config.json"), {}, None),
    "keras_lzma_weights": (kpredict("lzma.keras"), 2, r"xo predict: lzma\.keras: member 'model\.weights\.h5' uses compression method 14 \(LZMA\), which this build cannot read; re-save it stored or deflated$", ["out.npy"], lambda d: keras_lzma(d, "model.weights.h5"), {}, None),
    # a Masking layer where xo refuses it: not the first layer; a NotEqual
    # that is not its mask (the ops Keras writes for it in a Functional)
    # for its mask in a Functional (NotEqual, Any)
    "keras_masking_sequential": (kpredict("masking.keras"), 2, r"xo predict: masking\.keras: layer 'masking': masking must be the first layer, on the model's input \(a Masking elsewhere is not supported\)$", ["out.npy"], lambda d: keras_masking(d, False), {}, None),
    "keras_masking_functional": (kpredict("masking.keras"), 2, r"xo predict: masking\.keras: layer 'not_equal' \(NotEqual\): ", ["out.npy"], lambda d: keras_masking(d, True), {}, None),
    # the input files checked against the model before its activations are
    # allocated: a wrong file is named even where the model would not fit
    "predict_input_checked_first": (predict(model="long_seq.model"), 2, r"xo predict: x\.npy: shape \(40, 17, 2\) does not match the model input \(80000 values per sample, first axis = samples\); want \(n, 20000, 4\) or \(n, 80000\)$", ["out.npy"], None, {"XO_MODEL_MEMORY_MAX": "1000000"}, None),
    # seed's synthetic data set (20000 samples of the input) bounded as
    # activations are: 6 MB here over a limit of 1 MB
    "train_input_checked_first": (trainm("long_seq.model"), 2, r"xo train: x\.npy: shape \(40, 17, 2\) does not match the model input \(80000 values per sample, first axis = samples\); want \(n, 20000, 4\) or \(n, 80000\)$", ["ckpt"], None, {"XO_MODEL_MEMORY_MAX": "1000000"}, None),
    "train_files_over_max": (["train", "--model", "multi.model", *[a for k in range(9) for a in ("--x", "x_b.npy")], "--y", "y.npy", "--save", "ckpt", "--epochs", "1", "--device", "ref"], 2, r"xo train: 9 input files for a model of 2 inputs \(a, b\): one per model input, in its order$", ["ckpt"], None, {}, None),
    "seed_synthetic_over_limit": (["seed", "--model", MODEL, "--device", "ref", "--epochs", "1", "--batch-size", "16", "--repeat", "1"], 2, r"xo seed: .*model\.model: its synthetic data set \(20000 samples of 34 values\) needs 0\.00559 GiB, above the limit of 0\.000931 GiB \(XO_MODEL_MEMORY_MAX", [], None, {"XO_MODEL_MEMORY_MAX": "1000000"}, None),
    # a model of more inputs than xo runs: the model is the reason, however
    # many files are given
    "predict_keras_nin9_nine_files": (["predict", "--model", "nin9.keras", *[a for k in range(9) for a in ("--input", "nin%d.npy" % k)], "--output", "out.npy", "--device", "ref"], 2, r"xo predict: nin9\.keras: the model has 9 inputs \(InputLayers\); xo supports at most 8$", ["out.npy"], keras_nin9, {}, None),
    "predict_keras_nin9_one_file": (kpredict("nin9.keras"), 2, r"xo predict: nin9\.keras: the model has 9 inputs \(InputLayers\); xo supports at most 8$", ["out.npy"], keras_nin9, {}, None),
    "predict_spec_nin9_nine_files": (["predict", "--model", "nin9.model", "--weights", "ckpt", *[a for k in range(9) for a in ("--input", "x_b.npy")], "--output", "out.npy", "--device", "ref"], 2, r"xo predict: nin9\.model:9: input: the model has more than 8 inputs; xo supports at most 8$", ["out.npy"], None, {}, None),
    # too many files for a model of 2 inputs: counted against the model
    "predict_files_over_max": (["predict", "--model", "multi.model", "--weights", "ckpt", *[a for k in range(9) for a in ("--input", "x_b.npy")], "--output", "out.npy", "--device", "ref"], 2, r"xo predict: 9 input files for a model of 2 inputs \(a, b\): one per model input, in its order$", ["out.npy"], None, {}, None),
    "seed_files_over_max": (["seed", "--model", "multi.model", "--data", *["x_b.npy"] * 9, "y.npy", "--device", "ref", "--epochs", "1", "--repeat", "1"], 2, r"xo seed: 9 input files for a model of 2 inputs \(a, b\): one per model input, in its order$", [], None, {}, None),
    "multi_input_too_many": (["train", "--model", "multi.model", "--x", "x.npy", "--x", "x_b.npy", "--x", "x_b.npy", "--y", "y.npy", "--save", "ckpt", "--epochs", "1", "--device", "ref"], 2, r"xo train: 3 input files for a model of 2 inputs \(a, b\)", ["ckpt"], None, {}, None),
    "spec_multi_unnamed_input": (["train", "--model", "multi_unnamed.model", "--x", "x.npy", "--y", "y.npy", "--save", "ckpt", "--device", "ref"], 2, r"multi_unnamed\.model:2: input: a second input needs name=NAME", ["ckpt"], None, {}, None),
    "spec_multi_unused_input": (["train", "--model", "multi_unused.model", "--x", "x.npy", "--y", "y.npy", "--save", "ckpt", "--device", "ref"], 2, r"multi_unused\.model:2: input 'b' feeds no layer", ["ckpt"], None, {}, None),
    "seed_multi_input_count": (seed(model="multi.model"), 2, r"xo seed: 1 input file for a model of 2 inputs \(a, b\): one per model input, in its order$", ["x.npy"], None, {}, None),
    "seed_multi_input_rows": (["seed", "--model", "multi.model", "--data", "x.npy", "x_b_rows.npy", "y.npy", "--device", "ref", "--epochs", "1", "--repeat", "1"], 2, r"xo seed: x_b_rows\.npy: 39 samples, but x\.npy has 40", ["x.npy"], None, {}, None),
    "keras_graph_input_layers": (kpredict("g_in_layers.keras"), 2, r"g_in_layers\.keras: input_layers does not list the model's 2 InputLayers$", ["out.npy"], keras_graph_edit("input_layers", "g_in_layers.keras"), {}, None),
    # Conv2DTranspose: what crossover does not run, and what Keras refuses, by name
    "keras_convt_dilation": (kpredict("ct_dil.keras"), 2, r"ct_dil\.keras: layer 'conv2d_transpose': conv2d_transpose: dilation_rate=2, dilation_w=2 is not supported \(1 only\)$", ["out.npy"], keras_layer_edit("convt", "Conv2DTranspose", "dilation_rate", [2, 2], "ct_dil.keras"), {}, None),
    "keras_convt1d_dilation": (kpredict("ct1_dil.keras"), 2, r"ct1_dil\.keras: layer 'conv1d_transpose': conv1d_transpose: dilation_rate=2 is not supported \(1 only\)$", ["out.npy"], keras_layer_edit("convt1d", "Conv1DTranspose", "dilation_rate", [2], "ct1_dil.keras"), {}, None),
    "keras_convt_output_padding": (kpredict("ct_op.keras"), 2, r"ct_op\.keras: layer 'conv2d_transpose': conv2d_transpose: output_padding=2 must be -1 \(None\) or in 0\.\.strides-1 \(1\): Keras requires strides greater than output padding$", ["out.npy"], keras_layer_edit("convt", "Conv2DTranspose", "output_padding", [2, 1], "ct_op.keras"), {}, None),
    "keras_convt_channels_first": (kpredict("ct_cf.keras"), 2, r"ct_cf\.keras: layer 'conv2d_transpose' \(Conv2DTranspose\): data_format: only channels_last is supported$", ["out.npy"], keras_layer_edit("convt", "Conv2DTranspose", "data_format", "channels_first", "ct_cf.keras"), {}, None),
    "keras_convt_regularizer": (kpredict("ct_reg.keras"), 2, r"ct_reg\.keras: layer 'conv2d_transpose' \(Conv2DTranspose\): kernel_regularizer is not supported$", ["out.npy"], keras_layer_edit("convt", "Conv2DTranspose", "kernel_regularizer", {"module": "keras.regularizers", "class_name": "L2", "config": {"l2": 0.01}, "registered_name": None}, "ct_reg.keras"), {}, None),
    "keras_convt_output_padding_negative": (kpredict("ct_opn.keras"), 2, r"ct_opn\.keras: layer 'conv2d_transpose' \(Conv2DTranspose\): output_padding: expected an integer or two \(height, width\)$", ["out.npy"], keras_layer_edit("convt", "Conv2DTranspose", "output_padding", [-1, 0], "ct_opn.keras"), {}, None),
    "spec_mha_mask_layer": (predict(model="mask_layer.model"), 2, r"mask_layer\.model:4: attention_mask=d: 'd' is not a model input \(the mask must be a model input; a mask computed by layers is not supported yet\)$", ["out.npy"], mha_mask_specs, {}, None),
    "spec_mha_mask_shape": (predict(model="mask_shape.model"), 2, r"mask_shape\.model:3: multi_head_attention: attention_mask=m must be \[6\]\[6\] \(query steps, value steps; got rank 2 \[1\]\[6\]\): a mask Keras would broadcast is not supported yet$", ["out.npy"], mha_mask_specs, {}, None),
    "spec_mha_mask_kind": (predict(model="mask_kind.model"), 2, r"mask_kind\.model:3: dense: attention_mask= is an argument of multi_head_attention only$", ["out.npy"], mha_mask_specs, {}, None),
    "keras_mha_mask_from_layer": (kpredict("mm_layer.keras"), 2, r"mm_layer\.keras: layer 'multi_head_attention' \(MultiHeadAttention\): is called with attention_mask=dense, the output of a Dense \(a mask that is not a model Input is not supported yet\)$", ["out.npy"], keras_mha_mask_from_layer, {}, None),
    # an int InputLayer is ids: refused where no embedding takes them, never
    # read as floats (Keras would truncate them)
    "keras_int_input_dense": (kpredict("int_d3.keras"), 2, r"int_d3\.keras: layer '\w+': an input of dtype=int32 feeds only an embedding layer \(got \w+\)$", ["out.npy"], keras_int_input("d3", "input_layer", "int_d3.keras"), {}, None),
    # (an int attention mask Input is read as a bool one: mha_int.keras);
    # of several inputs too, where ids beside an attention mask are valid
    # (mha_pad_mask.keras) but these feed a Dense
    "keras_int_input_of_several": (["predict", "--model", "mx_int.keras", "--input", "kx.npy", "--input", "kx.npy", "--output", "out.npy", "--device", "ref"], 2, r"mx_int\.keras: layer '\w+': an input of dtype=int32 feeds only an embedding layer \(got dense\)$", ["out.npy"], keras_int_input("mha_mask", "x", "mx_int.keras"), {}, None),
    # a --model that is no model: named as what it is, not as a missing --weights
    "predict_keras_not_a_model": (["predict", "--model", "empty.keras", "--input", "x.npy", "--output", "out.npy"], 2, r"xo predict: empty\.keras: not a Keras model file by its content \(a \.keras is a zip archive holding config\.json, an \.h5 an HDF5 file\): damaged or truncated\?$", ["out.npy"], lambda d: open(f"{d}/empty.keras", "wb").write(b"PK\x05\x06" + bytes(18)), {}, None),
    "predict_spec_needs_weights": (["predict", "--model", MODEL, "--input", "x.npy", "--output", "out.npy"], 2, r"xo predict: .*model\.model: a spec, which carries no weights: --weights is required", ["out.npy"], None, {}, None),
    # an unknown kind: the error names every kind of the table, the newest too
    "spec_unknown_kind_lists_all": (predict(model="u.model"), 2, r"u\.model:2: unknown layer 'foo' \(expected input, conv1d, .*, multi_head_attention, re_lu, softmax, masking, rescaling, normalization, leaky_re_lu or elu\)$", ["out.npy"], lambda d: open(f"{d}/u.model", "w").write("input 29 1\nfoo units=3\n"), {}, None),
    # a bool input is an attention mask only: in a spec, a Keras file, an .npy
    "spec_bool_input_dense": (predict(model="mask_bool_dense.model"), 2, r"mask_bool_dense\.model:3: layer 'd': input 'm' is dtype=bool: a bool input is a multi_head_attention's attention_mask only$", ["out.npy"], mha_mask_specs, {}, None),
    "keras_bool_input_dense": (kpredict("x_bool.keras"), 2, r"x_bool\.keras: layer 'dense': input 'x' is dtype=bool: a bool input is a multi_head_attention's attention_mask only$", ["out.npy"], keras_bool_input_dense, {}, None),
    "keras_mask_op_own": (kpredict("mask_op_own.keras"), 2, r"mask_op_own\.keras: layer 'not_five' \(NotEqual\): an operation \(keras\.src\.ops\.numpy\) on the model's tensors is not supported; xo reads layers, and the masks Keras's own layers compute \(Embedding\(mask_zero=True\), Masking\)$", ["out.npy"], keras_mask_op_own, {}, None),
    "keras_mha_key_is_value": (kpredict("mha_kv.keras"), 0, None, [], keras_mha_key_is_value, {}, "kv_same"),
    "keras_ones_mask_on_masked": (kpredict("ones_on_masked.keras"), 2, r"ones_on_masked\.keras: layer 'global_average_pooling1d_\d+' \(GlobalAveragePooling1D\): is called with an all-true mask= while its input carries the ids' mask: not supported$", ["out.npy"], keras_ones_mask_on_masked, {}, None),
    "predict_bool_npy_not_mask": (["predict", "--model", os.path.join(KERAS, "mha_bool.keras"), "--input", "x0.npy", "--input", "x1.npy", "--input", "x2.npy", "--output", "out.npy", "--device", "ref"], 2, r"xo predict: x0\.npy: bool values for input 'q', which is not an attention mask \(only a multi_head_attention's attention_mask= input takes bool or integer keep values\)$", ["out.npy"], bool_npy_not_mask, {}, None),
    # an empty array (a 0 anywhere in its shape: NumPy writes and loads it)
    # is said to be one, for every input and label file of every command
    "predict_npy_empty_samples": (predict("x_e0.npy"), 2, r"xo predict: x_e0\.npy: shape \(0, 17, 2\) is an empty array \(a 0 in its shape\)", ["out.npy"], empty_npys, {}, None),
    "predict_npy_empty_features": (predict("x_e1.npy"), 2, r"xo predict: x_e1\.npy: shape \(8, 0\) is an empty array", ["out.npy"], empty_npys, {}, None),
    "predict_npy_empty_1d": (predict("x_e2.npy"), 2, r"xo predict: x_e2\.npy: shape \(0,\) is an empty array", ["out.npy"], empty_npys, {}, None),
    "predict_npy_empty_with_data": (predict("x_e3.npy"), 2, r"xo predict: x_e3\.npy: shape \(0, 34\) is an empty array \(a 0 in its shape\), yet 136 bytes of data follow its header$", ["out.npy"], empty_npys, {}, None),
    "train_npy_empty_x": (train("x_e1.npy"), 2, r"xo train: x_e1\.npy: shape \(8, 0\) is an empty array", ["ckpt"], empty_npys, {}, None),
    "train_npy_empty_y": (train(y="y_e0.npy"), 2, r"xo train: y_e0\.npy: shape \(40, 0\) is an empty array", ["ckpt"], empty_npys, {}, None),
    "train_npy_empty_ids": (train(y="y_e1.npy"), 2, r"xo train: y_e1\.npy: shape \(0,\) is an empty array", ["ckpt"], empty_npys, {}, None),
    "seed_npy_empty_x": (seed("x_e0.npy"), 2, r"xo seed: x_e0\.npy: shape \(0, 17, 2\) is an empty array", [], empty_npys, {}, None),
    "seed_npy_empty_y": (seed(y="y_e1.npy"), 2, r"xo seed: y_e1\.npy: shape \(0,\) is an empty array", [], empty_npys, {}, None),
    # the memory plan's switch takes 0 or 1 (docs/model.md, "The memory plan")
    "model_share_not_boolean": (predict(), 2, r"xo predict: model: XO_MODEL_SHARE='yes' is not 0 \(a buffer per tensor\) or 1 \(buffers shared by liveness\)$", ["out.npy"], None, {"XO_MODEL_SHARE": "yes"}, None),
    "fuse_env_misspelt": (predict(), 2, r"xo predict: model: XO_FUSE='REQUIRE' is not 0 \(op by op\), 1 \(fused where a backend takes the model\) or require$", ["out.npy"], None, {"XO_FUSE": "REQUIRE"}, None),
    # XO_FUSE=require names why no fused path takes the model: a layer
    # kind none has, an int32 ids input, the training compile, the backend
    "fuse_require_kind": (["predict", "--model", os.path.join(HERE, "..", "golden", "mha_enc", "model.model"), "--weights", os.path.join(HERE, "..", "golden", "mha_enc", "weights"), "--input", os.path.join(HERE, "..", "golden", "mha_enc", "x.npy"), "--output", "out.npy", "--device", "cpu"], 2, r"xo predict: XO_FUSE=require: backend cpu does not run this model's inference batch of 12 on its fused path \(layer 'mha' \(MultiHeadAttention\) has no fused path\)$", ["out.npy"], None, {"XO_FUSE": "require"}, None),
    "fuse_require_ids": (["predict", "--model", os.path.join(KERAS, "mha_pad.keras"), "--input", os.path.join(KERAS, "mha_pad.x.npy"), "--output", "out.npy", "--device", "cpu"], 2, r"on its fused path \(an int32 ids input runs op by op\)$", ["out.npy"], None, {"XO_FUSE": "require"}, None),
    "fuse_require_compile": (["train", "--model", os.path.join(HERE, "..", "golden", "cmp_bce_sgd", "model.model"), "--weights", os.path.join(HERE, "..", "golden", "cmp_bce_sgd", "weights"), "--x", os.path.join(HERE, "..", "golden", "cmp_bce_sgd", "x_train.npy"), "--y", os.path.join(HERE, "..", "golden", "cmp_bce_sgd", "y_train.npy"), "--save", "ckpt_out", "--epochs", "1", "--device", "cpu"], 2, r"training batch of 32 on its fused path \(the fused training step computes categorical_crossentropy from probabilities with Adam only\)$", ["ckpt_out"], None, {"XO_FUSE": "require"}, None),
    "fuse_require_activation": (["predict", "--model", os.path.join(HERE, "..", "golden", "acts", "model.model"), "--weights", os.path.join(HERE, "..", "golden", "acts", "weights"), "--input", os.path.join(HERE, "..", "golden", "acts", "x.npy"), "--output", "out.npy", "--device", "cl"], 2, r"xo predict: XO_FUSE=require: backend cl does not run this model's inference batch of \d+ on its fused path \(layer 'dense' has activation tanh, which the fused paths do not compute: linear, relu, sigmoid, and softmax last\)$", ["out.npy"], None, {"XO_FUSE": "require"}, None),
    "fuse_require_ref": (predict(), 2, r"xo predict: XO_FUSE=require: backend ref does not run this model's inference batch of 32 on its fused path \(this backend has no fused path\)$", ["out.npy"], None, {"XO_FUSE": "require"}, None),
    "summary_share_not_boolean": (["summary", "--model", MODEL], 2, r"xo summary: model: XO_MODEL_SHARE='yes' is not 0", [], None, {"XO_MODEL_SHARE": "yes"}, None),
    # float64 inputs and labels (NumPy's default): cast to float32 as Keras
    # does, by every command that reads an input or label file
    "predict_f8_input": (predict("x_f8.npy"), 0, None, [], f8_npys, {}, "f8_predicts_as_f4"),
    "predict_f8_big_endian": (predict("x_f8_be.npy"), 0, None, [], f8_npys, {}, "f8_predicts_as_f4"),
    "train_f8_x_y": (train("x_f8.npy", "y_f8.npy", "new_f8"), 0, None, ["ckpt"], f8_npys, {}, None),
    "seed_f8_data": (seed("x_f8.npy", "y_f8.npy"), 0, None, [], f8_npys, {}, None),
    "predict_f8_beyond_float32": (predict("x_f8_big.npy"), 2, r"xo predict: x_f8_big\.npy: float64 value -3\.5e\+38 at index 77 is beyond float32's range \(it would become -Inf\)$", ["out.npy"], f8_npys, {}, None),
    "train_f8_nan_input": (train("x_f8_nan.npy"), 2, r"x_f8_nan\.npy: sample 3 holds NaN at element 5", ["ckpt"], f8_npys, {}, None),
    "train_f8_truncated": (train("x_f8_short.npy"), 2, r"x_f8_short\.npy: truncated data: 10872 bytes for 1360 values$", ["ckpt"], f8_npys, {}, None),
    "seed_f8_shape_overflow": (seed("x_f8_huge.npy"), 2, r"x_f8_huge\.npy: shape size overflows$", [], f8_npys, {}, None),
    # compile_config losses around from_logits=True: a one-output model's list or dict of
    # one loss is that loss; Keras's other loss arguments off their defaults stay refused
    "keras_compile_logits_list_of_one": (kpredict("lg_list.keras"), 0, None, [], logits_files, {}, None),
    "keras_compile_logits_dict_of_output": (kpredict("lg_dict.keras"), 0, None, [], logits_files, {}, None),
    "keras_compile_logits_dict_other_key": (kpredict("lg_dict_other.keras"), 2, r"lg_dict_other\.keras: compile_config: loss: a dict keyed by 'not_the_output', not the output layer '[a-z_0-9]+'$", ["out.npy"], logits_files, {}, None),
    "keras_compile_logits_two_losses": (kpredict("lg_list_two.keras"), 2, r"lg_list_two\.keras: compile_config: loss: only one loss \(a name or a Loss object\) is supported, not a list or dict of several$", ["out.npy"], logits_files, {}, None),
    "keras_compile_logits_label_smoothing": (kpredict("lg_smoothing.keras"), 2, r"lg_smoothing\.keras: compile_config: loss CategoricalCrossentropy: label_smoothing != 0 is not supported$", ["out.npy"], logits_files, {}, None),
    "keras_compile_logits_axis": (kpredict("lg_axis.keras"), 2, r"lg_axis\.keras: compile_config: loss BinaryCrossentropy: axis is not supported$", ["out.npy"], logits_files, {}, None),
    "keras_compile_logits_ignore_class": (kpredict("lg_ignore_class.keras"), 2, r"lg_ignore_class\.keras: compile_config: loss SparseCategoricalCrossentropy: ignore_class is not supported$", ["out.npy"], logits_files, {}, None),
    "keras_compile_logits_reduction": (kpredict("lg_reduction.keras"), 2, r"lg_reduction\.keras: compile_config: loss CategoricalCrossentropy: reduction is not supported$", ["out.npy"], logits_files, {}, None),
    "keras_compile_logits_mse": (kpredict("lg_mse.keras"), 2, r"lg_mse\.keras: compile_config: loss MeanSquaredError: from_logits is not supported$", ["out.npy"], logits_files, {}, None),
    "keras_compile_logits_not_bool": (kpredict("lg_not_bool.keras"), 2, r"lg_not_bool\.keras: compile_config: loss CategoricalCrossentropy: from_logits: expected true, false, null or a number$", ["out.npy"], logits_files, {}, None),
    "keras_compile_logits_one": (["import", "lg_one.keras", "--out", "lg_one"], 0, None, [], logits_files, {}, "logits_one_imported"),
    "keras_compile_logits_mse_null": (kpredict("lg_mse_null.keras"), 0, None, [], logits_files, {}, None),
    "spec_compile_mse_from_logits": (predict(model="lg_mse.model"), 2, r"lg_mse\.model:\d+: compile: from_logits=True needs a cross-entropy loss, not mean_squared_error$", ["out.npy"], logits_files, {}, None),
    "spec_compile_from_logits_not_bool": (predict(model="lg_bad.model"), 2, r"lg_bad\.model:\d+: compile: from_logits=yes: expected True or False$", ["out.npy"], logits_files, {}, None),
    # xo check's default case of the categorical losses is a valid one (two classes: with one
    # the gradient is 0 and the case is uninformative)
    "check_default_categorical_crossentropy": (["check", "--op", "categorical_crossentropy"], 0, None, [], None, {}, None),
    "check_default_sparse_categorical_crossentropy": (["check", "--op", "sparse_categorical_crossentropy"], 0, None, [], None, {}, None),
    # a from_logits compile trains through `xo train` and `xo seed` (op by op on every backend)
    "train_from_logits": (["train", "--model", "lg_ok.model", "--x", "x.npy", "--y", "y.npy", "--save", "ck_lg", "--epochs", "1", "--batch-size", "16", "--device", "ref"], 0, None, ["ckpt"], logits_files, {}, None),
    "seed_from_logits": (seed(model="lg_ok.model"), 0, None, [], logits_files, {}, None),
    # a weights file's variable count names every variable the layer needs
    # the global poolings' keepdims is Python's truth of a bool, null or a number
    "keras_keepdims_string": (kpredict("kd_str.keras"), 2, r"kd_str\.keras: layer 'global_average_pooling1d' \(GlobalAveragePooling1D\): keepdims: expected true, false, null or a number$", ["out.npy"], keras_layer_edit("keepdims", "GlobalAveragePooling1D", "keepdims", "True", "kd_str.keras"), {}, None),
    "keepdims_not_boolean": (["summary", "--model", "kd.model"], 2, r"kd\.model:2: keepdims=yes: expected True or False$", [], lambda d: open(f"{d}/kd.model", "w").write("input 8 3\nglobal_max_pooling1d keepdims=yes\n"), {}, None),
    # labels of every integer width NumPy writes (MNIST's uint8) and bool,
    # as class ids and as one-hot rows (Keras's fit takes each)
    "train_labels_uint8_ids": (train(y="y_ids_uint8.npy", save="new_u1"), 0, None, ["ckpt"], int_label_npys, {}, None),
    "train_labels_int8_ids": (train(y="y_ids_int8.npy", save="new_i1"), 0, None, ["ckpt"], int_label_npys, {}, None),
    "train_labels_int16_ids": (train(y="y_ids_int16.npy", save="new_i2"), 0, None, ["ckpt"], int_label_npys, {}, None),
    "train_labels_uint16_ids": (train(y="y_ids_uint16.npy", save="new_u2"), 0, None, ["ckpt"], int_label_npys, {}, None),
    "train_labels_uint32_ids": (train(y="y_ids_uint32.npy", save="new_u4"), 0, None, ["ckpt"], int_label_npys, {}, None),
    "train_labels_uint64_ids": (train(y="y_ids_uint64.npy", save="new_u8"), 0, None, ["ckpt"], int_label_npys, {}, None),
    "train_labels_int16_big_endian": (train(y="y_ids_int16_be.npy", save="new_be"), 0, None, ["ckpt"], int_label_npys, {}, None),
    "train_labels_bool_ids": (train(y="y_ids_bool.npy", save="new_b1"), 0, None, ["ckpt"], int_label_npys, {}, None),
    "train_labels_uint8_one_hot": (train(y="y_oh_uint8.npy", save="new_oh_u1"), 0, None, ["ckpt"], int_label_npys, {}, None),
    "train_labels_bool_one_hot": (train(y="y_oh_bool.npy", save="new_oh_b1"), 0, None, ["ckpt"], int_label_npys, {}, None),
    "seed_labels_uint8_ids": (seed(y="y_ids_uint8.npy"), 0, None, ["ckpt"], int_label_npys, {}, None),
    "train_labels_int8_negative": (train(y="y_ids_int8_negative.npy"), 2, r"y_ids_int8_negative\.npy: label -3 of sample 4 is not a class id in 0\.\.4$", ["ckpt"], int_label_npys, {}, None),
    "train_labels_uint16_out_of_range": (train(y="y_ids_uint16_range.npy"), 2, r"y_ids_uint16_range\.npy: label 300 of sample 4 is not a class id in 0\.\.4$", ["ckpt"], int_label_npys, {}, None),
    "train_labels_uint64_beyond_int64": (train(y="y_ids_uint64_huge.npy"), 2, r"y_ids_uint64_huge\.npy: uint64 value 9223372036854775808 at index 4 is beyond int64's range$", ["ckpt"], int_label_npys, {}, None),
    "train_labels_uint8_truncated": (train(y="y_ids_uint8_short.npy"), 2, r"y_ids_uint8_short\.npy: truncated data: 37 bytes for 40 values$", ["ckpt"], int_label_npys, {}, None),
    "train_labels_uint8_one_hot_two": (train(y="y_oh_uint8_two.npy"), 2, r"y_oh_uint8_two\.npy: label of sample 6 is not one-hot: 2 at class 1 ", ["ckpt"], int_label_npys, {}, None),
    "predict_uint8_for_float_input": (predict("x_uint8.npy"), 2, r"x_uint8\.npy: integer \(uint8\) values for a float32 model input", ["out.npy"], int_label_npys, {}, None),
    "keras_normalization_vars_missing": (kpredict(os.path.join(KERAS, "norm_mlp.keras"), os.path.join(KERAS, "norm_given.weights.h5")), 2, r"norm_given\.weights\.h5: layer 'normalization': layers/normalization/vars holds 0 variables, the model needs 3 \(mean, variance and count\)$", ["out.npy"], kx_flat(6), {}, None),
    # xo seed --data checks labels by the model's loss: a sparse model's ids as train takes
    # them, and one class per sample for any other loss (the protocol's argmax accuracy)
    "seed_bce_multi_hot": (seed(y="y_multi.npy", model="seed_bce.model"), 2, r"y_multi\.npy: label of sample 1 is not one-hot: 2 ones \(the seed protocol scores one class per sample: one 1 and zeros per row, or class ids; a binary_crossentropy model's other labels train with xo train\)$", [], seed_loss_files, {}, None),
    "seed_bce_one_hot": (seed(model="seed_bce.model"), 0, None, [], seed_loss_files, {}, None),
    "seed_scce_ids_n1": (seed(y="y_ids_n1.npy", model="seed_scce.model"), 0, None, [], seed_loss_files, {}, None),
    "seed_scce_one_hot": (seed(model="seed_scce.model"), 2, r"y\.npy: shape \(\d+, \d+\) does not fit: sparse_categorical_crossentropy needs class ids \(n,\)$", [], seed_loss_files, {}, None),
    # a categorical cross-entropy over one class checks nothing: refused as bad input
    "check_categorical_one_class": (["check", "--op", "categorical_crossentropy", "ch=1"], 2, r"^xo check: ch=1: categorical_crossentropy over one class has loss and gradient 0 whatever the input \(nothing to check\): give ch=2 or more$", [], None, {}, None),
    "check_sparse_one_class_file": (["check", "--shapes", "ce1.txt"], 2, r"^xo check: ce1\.txt:2: ch=1: sparse_categorical_crossentropy over one class ", [], lambda d: open(f"{d}/ce1.txt", "w").write("binary_crossentropy batch=2 ch=1\nsparse_categorical_crossentropy batch=2 ch=1 from_logits=1\n"), {}, None),
    "check_huge_batch": (["check", "--op", "binary_crossentropy", "batch=2147483647"], 2, r"^xo check: .*the case needs [0-9.]+ GiB of memory, more than half of this machine's [0-9.]+ GiB: give a smaller shape$", [], None, {}, None),
    "check_huge_batch_file": (["check", "--shapes", "big.txt"], 2, r"^xo check: big\.txt:1: .*the case needs [0-9.]+ GiB of memory", [], lambda d: open(f"{d}/big.txt", "w").write("dense batch=4000000 ch=4000000 units=8\n"), {}, None),
    "keras_config_nan_token": (kpredict("nan_units.keras"), 2, r"nan_units\.keras: layer 'dense' \(Dense\): units is NaN in the model config; xo reads only finite numbers there$", [], keras_layer_edit("norm_mlp", "Dense", "units", float("nan"), "nan_units.keras"), {}, None),
    "keras_config_infinity_in_list": (kpredict("inf_mean.keras"), 2, r"inf_mean\.keras: layer 'normalization' \(Normalization\): mean\[1\] is -Infinity in the model config; xo reads only finite numbers there$", [], keras_layer_edit("norm_mlp", "Normalization", "mean", [0.0, float("-inf"), 1.0, 2.0, 3.0, 4.0], "inf_mean.keras"), {}, None),
    "keras_normalization_invert_not_bool": (kpredict("n_invs.keras"), 2, r"n_invs\.keras: layer 'normalization' \(Normalization\): invert: expected true or false$", ["out.npy"], lambda d: (norm_edit("norm_mlp", "n_invs.keras", lambda c: c.update(invert="yes"))(d), kx_flat(6)(d)), {}, None),
    "spec_normalization_invert_not_bool": (predict(model="ni.model"), 2, r"ni\.model:2: invert=yes: expected True or False$", ["out.npy"], lambda d: open(f"{d}/ni.model", "w").write("input 29 1\nnormalization invert=yes\n"), {}, None),
}


def after_checks(name, d, xo):
    """Extra checks some rows need; returns a failure string or None."""
    if name == "link_target_is_npy":
        if not os.path.islink(f"{d}/link.npy"):
            return "link.npy is no longer a symlink"
        if open(f"{d}/target.npy", "rb").read(6) != b"\x93NUMPY":
            return "the symlink's target was not replaced by the .npy output"
    if name == "cklink_is_checkpoint":
        if not os.path.islink(f"{d}/cklink"):
            return "cklink is no longer a symlink"
        if not os.path.exists(f"{d}/ckdir/xo-checkpoint.txt"):
            return "the checkpoint did not land in the symlink's target directory"
    if name == "kill_leaves_loadable":
        r = subprocess.run([xo, *predict(out="after.npy")], cwd=d, capture_output=True, text=True)
        if r.returncode:
            return "the checkpoint left by a kill does not load: " + r.stderr.strip()
        left = [e for e in os.listdir(d) if ".xo-" in e]
        if not left:
            return "expected the killed save's hidden sibling (pid gone) to exist"
        r = subprocess.run([xo, *train()], cwd=d, capture_output=True, text=True)
        if r.returncode:
            return "a save after the kill failed: " + r.stderr.strip()
        left = [e for e in os.listdir(d) if ".xo-" in e] + \
               [e for e in os.listdir(f"{d}/ckpt") if e.startswith(".") or e.endswith(".tmp")]
        if left:
            return "stray temporaries after the next save: %s" % left
    if name == "logits_one_imported":
        if not os.path.isfile(f"{d}/lg_one/model.spec"):
            return "xo import wrote no model.spec"
        text = open(f"{d}/lg_one/model.spec").read()
        if "from_logits=True" not in text:
            return "from_logits=1 was not read as true: " + repr(text.splitlines()[-1])
    if name == "kv_same":
        r = subprocess.run([xo, "predict", "--model", "mha_pad.keras", "--input", "kx.npy",
                            "--output", "out_pad.npy", "--device", "ref"],
                           cwd=d, capture_output=True, text=True)
        if r.returncode:
            return "the fixture's predict failed: " + r.stderr.strip()
        if open(f"{d}/out_pad.npy", "rb").read() != open(f"{d}/out.npy", "rb").read():
            return "mha(e, e, e) predicted otherwise than mha(e, e)"
    if name == "f8_predicts_as_f4":
        r = subprocess.run([xo, *predict(out="out4.npy")], cwd=d, capture_output=True, text=True)
        if r.returncode:
            return "the float32 predict failed: " + r.stderr.strip()
        if open(f"{d}/out4.npy", "rb").read() != open(f"{d}/out.npy", "rb").read():
            return "the float64 input predicted otherwise than its float32 values"
    return None


def fixtures_key(xo):
    """What the fixtures depend on: this script, the golden files they are
    made from and the xo binary that trains the checkpoints (its identity
    by stat, so a rebuilt binary makes a new set)."""
    h = hashlib.sha256()
    with open(os.path.abspath(__file__), "rb") as f:
        h.update(f.read())
    for p in (xo, MODEL, os.path.join(GOLDEN, "x_train.npy"), os.path.join(GOLDEN, "y_train.npy")):
        st = os.stat(p)
        h.update(f"{os.path.realpath(p)} {st.st_ino} {st.st_size} {st.st_mtime_ns}\n".encode())
    return h.hexdigest()[:20]


# A build folder older than this is a dead one's whatever its pid says (a
# case's ctest timeout is 120 s; a reused pid must not keep it forever).
STALE_BUILD_S = 15 * 60


def pid_alive(pid):
    """Whether process pid exists (one of another user counts as alive)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def sweep_stale_builds(cache):
    """Remove the .new-PID-* folders that cached_fixtures' builders killed
    mid-way left behind: the pid is gone, or the folder is older than
    STALE_BUILD_S (a name without a pid, of an older run.py: by age only).
    A live builder's folder is never touched; two sweepers removing the same
    folder at once is harmless (each ignores what the other removed)."""
    now = time.time()
    for e in os.listdir(cache):
        if not e.startswith(".new-"):
            continue
        path = os.path.join(cache, e)
        pid = e[5:].split("-", 1)[0]
        try:
            old = now - os.lstat(path).st_mtime > STALE_BUILD_S
        except FileNotFoundError:
            continue
        dead = pid.isdigit() and "-" in e[5:] and not pid_alive(int(pid))
        if dead or old:
            shutil.rmtree(path, ignore_errors=True)


def check_sweep():
    """sweep_stale_builds on a made-up cache: a dead pid's folder and an old
    one go; a live pid's fresh one and a finished set stay."""
    with tempfile.TemporaryDirectory() as cache:
        child = os.fork()
        if child == 0:
            os._exit(0)
        os.waitpid(child, 0)
        made = {f".new-{child}-dead": True, f".new-{os.getpid()}-live": False,
                ".new-oldstyle": False, f".new-{os.getpid()}-aged": True, "0123abcd": False}
        for name in made:
            os.makedirs(os.path.join(cache, name, "sub"))
        aged = time.time() - STALE_BUILD_S - 60
        os.utime(os.path.join(cache, f".new-{os.getpid()}-aged"), (aged, aged))
        sweep_stale_builds(cache)
        left = set(os.listdir(cache))
        wrong = [n for n, gone in made.items() if (n in left) == gone]
        if wrong:
            print("sweep_stale_builds: wrong for %s (left: %s)" % (wrong, sorted(left)))
            return 1
    return 0


def cached_fixtures(xo, cache):
    """The fixture set for xo in cache/KEY, made once: built in a temporary
    sibling and renamed into place, so a case running beside the one that
    builds it sees the whole set or none. Sets of other keys (older
    binaries) are removed when a new one lands."""
    key = fixtures_key(xo)
    final = os.path.join(cache, key)
    if os.path.isdir(final):
        return final
    os.makedirs(cache, exist_ok=True)
    sweep_stale_builds(cache)
    tmp = tempfile.mkdtemp(prefix=f".new-{os.getpid()}-", dir=cache)
    fixtures(tmp, xo)
    try:
        os.rename(tmp, final)
    except OSError:  # another case landed the same set first
        shutil.rmtree(tmp, ignore_errors=True)
        return final
    for e in os.listdir(cache):
        if e != key and not e.startswith("."):
            shutil.rmtree(os.path.join(cache, e), ignore_errors=True)
    return final


def copy_fixtures(src, d):
    """src's tree into the empty directory d as fixtures() made it: files
    with their bytes and mode, directories, symlinks with their targets,
    FIFOs made anew (never opened)."""
    for root, dirs, files in os.walk(src):
        rel = os.path.relpath(root, src)
        out = d if rel == "." else os.path.join(d, rel)
        for name in dirs + files:
            s_path, o_path = os.path.join(root, name), os.path.join(out, name)
            st = os.lstat(s_path)
            if stat.S_ISLNK(st.st_mode):
                os.symlink(os.readlink(s_path), o_path)
            elif stat.S_ISDIR(st.st_mode):
                os.mkdir(o_path)
            elif stat.S_ISFIFO(st.st_mode):
                os.mkfifo(o_path)
            elif stat.S_ISREG(st.st_mode):
                shutil.copy2(s_path, o_path)
            else:
                sys.exit(f"badinput: fixture {s_path}: not a file, directory, symlink or FIFO")
        dirs[:] = [n for n in dirs if not os.path.islink(os.path.join(root, n))]


def run_case(xo, name):
    argv, code, regex, protect, setup, env, after = CASES[name]
    d = tempfile.mkdtemp(prefix="xo-badinput-")
    try:
        # XO_BADINPUT_CACHE (suites/badinput.cmake: the build folder): the
        # fixtures are made once per binary and copied into each case's
        # directory, not trained again for each of the cases
        cache = os.environ.get("XO_BADINPUT_CACHE")
        if cache:
            copy_fixtures(cached_fixtures(xo, cache), d)
        else:
            fixtures(d, xo)
        if setup:
            setup(d)
        before = {p: snapshot(os.path.join(d, p)) for p in protect}
        if "/dev/null" in argv:
            # Never risk the machine's /dev/null on a binary that would
            # replace it (as root the old code did): the same command must
            # first refuse a FIFO of our own.
            probe = [a if a != "/dev/null" else "fifo" for a in argv]
            r = subprocess.run([xo, *probe], cwd=d, capture_output=True)
            if r.returncode != 2:
                print(f"FAILED {name}: a FIFO output gave exit {r.returncode}, not 2: "
                      "/dev/null not tried")
                return 1
        r = subprocess.run([xo, *argv], cwd=d, capture_output=True, env={**os.environ, **env})
        err = r.stderr.decode("latin1")
        fails = []
        if r.returncode != code:
            fails.append(f"exit {r.returncode}, expected {code}")
        if code == 2:
            lines = err.split("\n")
            if len(lines) != 2 or lines[1] != "" or not lines[0].startswith("xo "):
                fails.append("stderr is not exactly one 'xo ...' line")
            if any(ord(c) < 0x20 and c != "\n" or ord(c) == 0x7f for c in err):
                fails.append("stderr holds a raw control byte")
        if regex and not re.search(regex, err):
            fails.append(f"stderr does not match /{regex}/")
        for p in protect:
            if snapshot(os.path.join(d, p)) != before[p]:
                fails.append(f"{p} changed")
        if after and not fails:
            msg = after_checks(after, d, xo)
            if msg:
                fails.append(msg)
        print(f"{name}: exit {r.returncode}: {err.strip()!r}")
        for f in fails:
            print(f"FAILED {name}: {f}")
        return 1 if fails else 0
    finally:
        shutil.rmtree(d, ignore_errors=True)


def main():
    if sys.argv[1:] == ["--list"]:
        print(";".join(CASES))
        return 0
    if sys.argv[1:] == ["--check-sweep"]:
        return check_sweep()
    if len(sys.argv) != 3 or sys.argv[2] not in CASES:
        sys.exit("usage: run.py XO CASE | --list")
    return run_case(os.path.abspath(sys.argv[1]), sys.argv[2])


if __name__ == "__main__":
    sys.exit(main())
