"""dirmn._capi checked against capi/include/dirmn.h itself: every DIRMN_API
function wrapped with the same arity and compatible ctypes types, every enum
constant and literal #define equal, every function pointer type with the
header's signature, every struct's fields in order with the header's types
(function pointers declared in a struct included) and, where a C compiler
exists, the same size and offsets."""

import ctypes
import os
import re
import shutil
import subprocess

import pytest

from dirmn import _capi as C

from conftest import repo_path


def header_path():
    d = os.environ.get("DIRMN_INCLUDE_DIR")
    return os.path.join(d, "dirmn.h") if d else repo_path("capi", "include", "dirmn.h")


def _int_literal(v):
    m = re.fullmatch(r"(0[xX][0-9a-fA-F]+|[0-9]+)[uUlL]*", v.strip())
    return None if m is None else int(m.group(1), 0)


def parse_header(path):
    with open(path) as f:
        text = f.read()
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    defines = {}
    for m in re.finditer(r"^[ \t]*#[ \t]*define[ \t]+(DIRMN_\w+)[ \t]+([^\s\\]+)[ \t]*$", text,
                         re.M):
        v = _int_literal(m.group(2))
        if v is not None:
            defines[m.group(1)] = v
    # Preprocessor lines (with continuations) are not declarations.
    body = re.sub(r"^[ \t]*#(?:[^\n]*\\\n)*[^\n]*", " ", text, flags=re.M)
    enums = {}
    for m in re.finditer(r"typedef\s+enum\s+(\w+)(?:\s+\w+)*\s*\{([^}]*)\}\s*(\w+)\s*;", body):
        members, nxt = {}, 0
        for item in m.group(2).split(","):
            item = item.strip()
            if not item:
                continue
            name, _, val = (s.strip() for s in item.partition("="))
            value = _int_literal(val) if val else nxt
            assert value is not None, "cannot read %s" % name
            members[name] = value
            nxt = value + 1
        enums[m.group(3)] = members
    structs = {}
    for m in re.finditer(r"typedef\s+struct\s+(\w+)(?:\s+\w+)*\s*\{([^}]*)\}\s*(\w+)\s*;", body):
        fields = []
        for decl in m.group(2).split(";"):
            decl = decl.strip()
            if not decl:
                continue
            # A function pointer declared in place ("void (*release)(void*
            # data)") keeps its whole type, the name left out:
            # "void (*)(void* data)".
            pm = re.fullmatch(r"(.*?)\(\s*\*\s*(\w+)\s*\)\s*(\([^()]*\))", decl, re.S)
            if pm is not None:
                fields.append(("%s (*)%s" % (pm.group(1).strip(), pm.group(3)), pm.group(2)))
                continue
            # One declaration may name several fields ("int64_t a, b;"): in C
            # the base type is shared and each declarator has its own stars.
            first, *more = (d.strip() for d in decl.split(","))
            fm = re.fullmatch(r"(.*?)(\w+)", first, re.S)
            fields.append((fm.group(1).strip(), fm.group(2)))
            base = fm.group(1).replace("*", " ").strip()
            for d in more:
                dm = re.fullmatch(r"(\**)\s*(\w+)", d)
                assert dm is not None, "cannot read the declarator %r of %r" % (d, decl)
                fields.append(((base + dm.group(1)).strip(), dm.group(2)))
        structs[m.group(3)] = fields
    opaque = set(re.findall(r"typedef\s+struct\s+\w+\s+(\w+)\s*;", body))
    fnptrs = {m.group(2): (m.group(1).strip(), parameter_types(m.group(3)))
              for m in re.finditer(r"typedef\s+([^;{}]*?)\(\s*\*\s*(\w+)\s*\)\s*\(([^()]*)\)\s*;",
                                   body)}
    functions = []
    for m in re.finditer(r"DIRMN_API\s+([^;{}()]+?)\s*\(([^()]*)\)\s*;", body):
        rm = re.fullmatch(r"(.*?)\s*\b(\w+)", m.group(1).strip(), re.S)
        functions.append((rm.group(2), rm.group(1).strip(), parameter_types(m.group(2))))
    return dict(functions=functions, enums=enums, structs=structs, opaque=opaque,
                fnptrs=fnptrs, defines=defines)


def parameter_types(argtext):
    """The types of a C parameter list ("const double* x, int n"), names left out."""
    args = []
    argtext = argtext.strip()
    if argtext not in ("void", ""):
        for a in argtext.split(","):
            a = " ".join(a.split())
            am = re.fullmatch(r"(.*?[\s*])(\w+)", a)
            bare = am is None or not re.sub(r"\bconst\b", "", am.group(1)).strip()
            args.append(a if bare else am.group(1).strip())
    return args


PRIMITIVES = {
    "char": ctypes.c_char, "int": ctypes.c_int, "unsigned": ctypes.c_uint,
    "unsigned int": ctypes.c_uint, "double": ctypes.c_double, "float": ctypes.c_float,
    "size_t": ctypes.c_size_t, "int32_t": ctypes.c_int32, "uint32_t": ctypes.c_uint32,
    "int64_t": ctypes.c_int64, "uint64_t": ctypes.c_uint64,
}


def function_pointer_type(ret, args, h):
    """The CFUNCTYPE of a C function pointer (ctypes caches these types, so
    one built here is the very class _capi's declaration made)."""
    return ctypes.CFUNCTYPE(ctypes_type(ret, h), *(ctypes_type(a, h) for a in args))


def ctypes_type(ctype, h):
    """The ctypes type a C declaration must have in _capi, from the header alone."""
    pm = re.fullmatch(r"(.*?)\(\s*\*\s*\)\s*\(([^()]*)\)", ctype.strip(), re.S)
    if pm is not None:  # a function pointer declared in place (a struct field)
        return function_pointer_type(pm.group(1).strip(), parameter_types(pm.group(2)), h)
    t = re.sub(r"\bconst\b", " ", ctype)
    nptr = t.count("*")
    base = " ".join(t.replace("*", " ").split())
    if base == "void" and nptr == 0:
        return None
    if base == "char" and nptr == 1:
        return ctypes.c_char_p
    if base == "void" or base in h["opaque"]:
        # void* and opaque handles are addresses: T* -> c_void_p, T** ->
        # POINTER(c_void_p).
        t, nptr = ctypes.c_void_p, nptr - 1
    elif base in PRIMITIVES:
        t = PRIMITIVES[base]
    elif base in h["enums"]:
        t = ctypes.c_int
    elif base in h["fnptrs"]:
        t = getattr(C, base)
    elif base in h["structs"]:
        t = getattr(C, base)
    else:
        raise AssertionError("no ctypes mapping for %r" % ctype)
    for _ in range(nptr):
        t = ctypes.POINTER(t)
    return t


H = parse_header(header_path())
TABLE = {name: (ret, args) for name, ret, args in C.FUNCTIONS}


def test_parser_found_the_header():
    assert len(H["functions"]) >= 40
    assert "dirmn_status" in H["enums"] and "dirmn_counts_options" in H["structs"]
    assert "dirmn_context" in H["opaque"] and "dirmn_interrupt_fn" in H["fnptrs"]
    assert "DIRMN_FULL" in H["defines"]


@pytest.mark.parametrize("name,cret,cargs", H["functions"], ids=[f[0] for f in H["functions"]])
def test_function_wrapped(name, cret, cargs):
    assert name in TABLE, "%s is not in _capi.FUNCTIONS" % name
    ret, args = TABLE[name]
    assert len(args) == len(cargs)
    assert ret == ctypes_type(cret, H)
    for i, ca in enumerate(cargs):
        assert (i, args[i]) == (i, ctypes_type(ca, H)), "%s argument %d (%s)" % (name, i, ca)
    f = C.function(name)
    assert isinstance(f, ctypes._CFuncPtr), "%s is not exported by the library" % name
    assert list(f.argtypes) == list(args) and f.restype == ret


@pytest.mark.parametrize("fname", sorted(H["fnptrs"]))
def test_function_pointer_typedef(fname):
    ret, args = H["fnptrs"][fname]
    assert getattr(C, fname) is function_pointer_type(ret, args, H)


def test_no_wrapper_without_declaration():
    names = [f[0] for f in H["functions"]]
    assert [f[0] for f in C.FUNCTIONS] == names  # also the header's order


@pytest.mark.parametrize("ename", sorted(H["enums"]))
def test_enum(ename):
    assert getattr(C, ename) is ctypes.c_int
    assert C.ENUMS[ename] == H["enums"][ename]
    for member, value in H["enums"][ename].items():
        assert getattr(C, member) == value, member
    assert set(C.ENUMS) == set(H["enums"])


def test_defines():
    for name, value in H["defines"].items():
        assert getattr(C, name) == value, name
    d = H["defines"]
    assert C.DIRMN_VERSION_NUMBER == (d["DIRMN_VERSION_MAJOR"] * 10000
                                      + d["DIRMN_VERSION_MINOR"] * 100 + d["DIRMN_VERSION_PATCH"])


@pytest.mark.parametrize("sname", sorted(H["structs"]))
def test_struct_fields(sname):
    S = getattr(C, sname)
    assert S in C.STRUCTS
    want = [(f, ctypes_type(t, H)) for t, f in H["structs"][sname]]
    assert [(f, t) for f, t in S._fields_] == want
    assert set(s.__name__ for s in C.STRUCTS) == set(H["structs"])


def _c_layout(tmp_path):
    cc = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if cc is None:
        pytest.skip("no C compiler: struct layout not compared with C")
    src = tmp_path / "layout.c"
    lines = ["#include <stdio.h>", "#include <stddef.h>", '#include "dirmn.h"',
             "int main(void) {"]
    for sname, fields in H["structs"].items():
        lines.append('  printf("%s %%zu\\n", sizeof(%s));' % (sname, sname))
        for _, f in fields:
            lines.append('  printf("%s.%s %%zu\\n", offsetof(%s, %s));' % (sname, f, sname, f))
    lines.append("  return 0;\n}")
    src.write_text("\n".join(lines))
    exe = tmp_path / "layout"
    subprocess.run([cc, "-I" + os.path.dirname(header_path()), "-o", str(exe), str(src)],
                   check=True, capture_output=True)
    out = subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout
    return {k: int(v) for k, v in (line.split() for line in out.splitlines())}


def test_struct_layout_agrees_with_c(tmp_path):
    layout = _c_layout(tmp_path)
    for sname, fields in H["structs"].items():
        S = getattr(C, sname)
        assert (sname, ctypes.sizeof(S)) == (sname, layout[sname])
        for _, f in fields:
            assert (sname, f, getattr(S, f).offset) == (sname, f, layout["%s.%s" % (sname, f)])


def test_library_fills_its_own_size():
    o = C.dirmn_counts_options(0, 0xFFFFFFFF, 7)
    C.dirmn_counts_options_init_sized(ctypes.byref(o), ctypes.sizeof(o))
    assert o.size == ctypes.sizeof(C.dirmn_counts_options)
    assert o.flags == 0 and o.storage == C.DIRMN_STORAGE_AUTO
    for S, init in ((C.dirmn_fit_options, C.dirmn_fit_options_init_sized),
                    (C.dirmn_mixture_options, C.dirmn_mixture_options_init_sized)):
        s = S()
        init(ctypes.byref(s), ctypes.sizeof(S))
        assert s.size == ctypes.sizeof(S) and s.max_iterations == 1000
    r = C.dirmn_reg_options()
    C.dirmn_reg_options_init_sized(ctypes.byref(r), ctypes.sizeof(r))
    assert r.size == ctypes.sizeof(C.dirmn_reg_options)
    assert (r.tolerance, r.max_iterations) == (1e-10, 200) and not r.weights
    so = C.dirmn_sample_options(0, 5)
    C.dirmn_sample_options_init_sized(ctypes.byref(so), ctypes.sizeof(so))
    assert so.size == ctypes.sizeof(C.dirmn_sample_options) and so.seed == 0
    assert not so.component and not so.mixture_weights and not so.component_out
    assert so.storage == C.DIRMN_STORAGE_AUTO
    g = C.dirmn_group_test_options(0, 7, 9)
    C.dirmn_group_test_options_init_sized(ctypes.byref(g), ctypes.sizeof(g))
    assert g.size == ctypes.sizeof(C.dirmn_group_test_options)
    assert (g.bootstrap, g.seed, g.tolerance, g.max_iterations) == (0, 0, 1e-10, 1000)
