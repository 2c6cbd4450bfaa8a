# Checks LibDirmn against the C header itself (not a copy): every DIRMN_API
# function is wrapped with the same arity and compatible types, and every enum
# constant, literal #define and struct layout agrees.

const L = Dirmn.LibDirmn

function header_path()
    dir = get(ENV, "DIRMN_INCLUDE_DIR", "")
    isempty(dir) || return joinpath(dir, "dirmn.h")
    return normpath(joinpath(@__DIR__, "..", "..", "..", "..", "capi", "include", "dirmn.h"))
end

struct ParsedHeader
    functions::Vector{Tuple{String,String,Vector{String}}}  # name, return, arg types
    enums::Dict{String,Vector{Tuple{String,Int}}}
    structs::Dict{String,Vector{Tuple{String,String}}}      # name => (type, field)
    opaque::Set{String}
    fnptrs::Set{String}
    defines::Dict{String,Int}
end

strip_comments(s) = replace(replace(s, r"/\*.*?\*/"s => " "), r"//[^\n]*" => " ")

function parse_int_literal(v)
    m = match(r"^(0[xX][0-9a-fA-F]+|[0-9]+)[uUlL]*$", v)
    m === nothing && return nothing
    return parse(Int, m.captures[1])
end

function parse_header(path)
    text = strip_comments(read(path, String))
    defines = Dict{String,Int}()
    for m in eachmatch(r"^[ \t]*#[ \t]*define[ \t]+(DIRMN_\w+)[ \t]+([^\s\\]+)[ \t]*$"m, text)
        v = parse_int_literal(m.captures[2])
        v === nothing || (defines[m.captures[1]] = v)
    end
    # Preprocessor lines, with their backslash continuations, are not
    # declarations (the DIRMN_API definitions would otherwise look like some).
    body = replace(text, r"^[ \t]*#(?:[^\n]*\\\n)*[^\n]*"m => " ")

    enums = Dict{String,Vector{Tuple{String,Int}}}()
    for m in eachmatch(r"typedef\s+enum\s+(\w+)(?:\s+\w+)*\s*\{([^}]*)\}\s*(\w+)\s*;", body)
        members = Tuple{String,Int}[]
        next = 0
        for item in split(m.captures[2], ',')
            item = strip(item)
            isempty(item) && continue
            parts = split(item, '=')
            name = String(strip(parts[1]))
            val = length(parts) == 2 ? parse_int_literal(strip(parts[2])) : next
            val === nothing && error("cannot read the value of $name in $path")
            push!(members, (name, val))
            next = val + 1
        end
        enums[m.captures[3]] = members
    end
    structs = Dict{String,Vector{Tuple{String,String}}}()
    for m in eachmatch(r"typedef\s+struct\s+(\w+)(?:\s+\w+)*\s*\{([^}]*)\}\s*(\w+)\s*;", body)
        fields = Tuple{String,String}[]
        for decl in split(m.captures[2], ';')
            decl = strip(decl)
            isempty(decl) && continue
            # One declaration may declare several fields ("int64_t a, b;"):
            # the later ones share the type without the first one's stars,
            # which belong to its declarator, and may have stars of their own.
            # A function-pointer field ("void (*release)(void* data)") is
            # one declarator, its type the whole declaration less the name.
            pm = match(r"^(.*?\(\s*\*\s*)(\w+)(\s*\).*)$"s, decl)
            if pm !== nothing
                push!(fields, (String(pm.captures[1] * pm.captures[3]), String(pm.captures[2])))
                continue
            end
            parts = split(decl, ',')
            fm = match(r"^(.*?)(\w+)$", strip(parts[1]))
            first = String(strip(fm.captures[1]))
            push!(fields, (first, String(fm.captures[2])))
            base = rstrip(first, ['*', ' ', '\t', '\n'])
            for d in parts[2:end]
                dm = match(r"^(\**)\s*(\w+)$", strip(d))
                dm === nothing && error("cannot read the declarator `$d` of $(m.captures[3])")
                push!(fields, (string(base, dm.captures[1]), String(dm.captures[2])))
            end
        end
        structs[m.captures[3]] = fields
    end
    opaque = Set{String}(m.captures[2] for m in
                         eachmatch(r"typedef\s+struct\s+(\w+)\s+(\w+)\s*;", body))
    fnptrs = Set{String}(m.captures[1] for m in
                         eachmatch(r"typedef\s+[^;{}]*?\(\s*\*\s*(\w+)\s*\)\s*\([^()]*\)\s*;", body))
    functions = Tuple{String,String,Vector{String}}[]
    for m in eachmatch(r"DIRMN_API\s+([^;{}()]+?)\s*\(([^()]*)\)\s*;", body)
        rm = match(r"^(.*?)\s*\b(\w+)$", strip(m.captures[1]))
        args = String[]
        argtext = strip(m.captures[2])
        if argtext != "void" && !isempty(argtext)
            for a in split(argtext, ',')
                a = strip(a)
                am = match(r"^(.*?[\s\*])(\w+)$", a)
                # An unnamed parameter is all type.
                t = am === nothing || isempty(strip(replace(am.captures[1], r"\bconst\b" => ""))) ?
                    a : am.captures[1]
                push!(args, String(strip(t)))
            end
        end
        push!(functions, (String(rm.captures[2]), String(strip(rm.captures[1])), args))
    end
    return ParsedHeader(functions, enums, structs, opaque, fnptrs, defines)
end

const C_PRIMITIVES = Dict(
    "void" => Cvoid, "char" => Cchar, "int" => Cint, "unsigned" => Cuint,
    "unsigned int" => Cuint, "long" => Clong, "unsigned long" => Culong,
    "float" => Cfloat, "double" => Cdouble, "size_t" => Csize_t,
    "int8_t" => Int8, "uint8_t" => UInt8, "int16_t" => Int16, "uint16_t" => UInt16,
    "int32_t" => Int32, "uint32_t" => UInt32, "int64_t" => Int64, "uint64_t" => UInt64,
)

# The Julia type a C declaration must have in LibDirmn, decided from the
# header alone: enums are int-sized (Cint), opaque structs are only seen
# through pointers (Cvoid), function pointers are Ptr{Cvoid}, defined structs
# are the Julia struct of the same name (whose layout is checked separately).
function julia_type(ctype::AbstractString, h::ParsedHeader)
    # A function pointer spelled out ("void (*)(void* data)", a struct's field).
    occursin(r"\(\s*\*\s*\)", ctype) && return Ptr{Cvoid}
    t = replace(ctype, r"\bconst\b" => " ")
    nptr = count(==('*'), t)
    base = join(split(replace(t, "*" => " ")), " ")
    base == "char" && nptr == 1 && return Cstring
    J = if haskey(C_PRIMITIVES, base)
        C_PRIMITIVES[base]
    elseif haskey(h.enums, base)
        Cint
    elseif base in h.opaque
        Cvoid
    elseif base in h.fnptrs
        Ptr{Cvoid}
    elseif haskey(h.structs, base)
        getfield(L, Symbol(base))
    else
        error("no Julia mapping for the C type `$ctype`")
    end
    for _ in 1:nptr
        J = Ptr{J}
    end
    return J
end

const HEADER = header_path()

@testset "header: $(HEADER)" begin
    @test isfile(HEADER)
    h = parse_header(HEADER)

    # The parser must have found the header's contents, or the checks below
    # would pass vacuously.
    @test length(h.functions) >= 20
    @test haskey(h.enums, "dirmn_status")
    @test haskey(h.structs, "dirmn_counts_options")
    @test "dirmn_context" in h.opaque
    @test "dirmn_interrupt_fn" in h.fnptrs
    # A function pointer declared in a struct is one field, of its own name.
    @test ("void (*)(void* data)", "release") in h.structs["dirmn_communicator_callbacks"]
    # Two fields of one declaration ("int64_t precision_stride_row,
    # precision_stride_col;") are both read, as int64_t.
    @test h.structs["dirmn_reg_options"][(end - 1):end] ==
          [("int64_t", "precision_stride_row"), ("int64_t", "precision_stride_col")]

    table = Dict(String(name) => (ret, args) for (name, ret, args) in L.FUNCTIONS)
    header_names = Set(f[1] for f in h.functions)

    @testset "every header function is wrapped: $(name)" for (name, cret, cargs) in h.functions
        @test haskey(table, name)
        if haskey(table, name)
            ret, args = table[name]
            @test length(args) == length(cargs)
            @test julia_type(cret, h) == ret
            for (i, ca) in enumerate(cargs)
                i <= length(args) || break
                jt = julia_type(ca, h)
                # A mismatch names the function and argument in the test output.
                @test (name, i, jt) == (name, i, args[i])
            end
            f = getfield(L, Symbol(name))
            @test hasmethod(f, NTuple{length(cargs),Any})
            @test L.symbol_pointer(Symbol(name)) != C_NULL
        end
    end

    @testset "no wrapper without a header declaration" begin
        for (name, _, _) in L.FUNCTIONS
            @test String(name) in header_names
        end
        @test length(L.FUNCTIONS) == length(h.functions)
    end

    @testset "enum $(ename)" for (ename, members) in h.enums
        @test isdefined(L, Symbol(ename))
        isdefined(L, Symbol(ename)) && @test getfield(L, Symbol(ename)) === Cint
        for (mname, val) in members
            @test isdefined(L, Symbol(mname))
            isdefined(L, Symbol(mname)) && @test (mname, getfield(L, Symbol(mname))) == (mname, val)
        end
    end

    @testset "defines" begin
        @test haskey(h.defines, "DIRMN_FULL")
        for (dname, val) in h.defines
            @test isdefined(L, Symbol(dname))
            isdefined(L, Symbol(dname)) && @test (dname, getfield(L, Symbol(dname))) == (dname, val)
        end
        @test L.DIRMN_VERSION_NUMBER ==
              h.defines["DIRMN_VERSION_MAJOR"] * 10000 + h.defines["DIRMN_VERSION_MINOR"] * 100 +
              h.defines["DIRMN_VERSION_PATCH"]
    end

    @testset "struct $(sname)" for (sname, fields) in h.structs
        T = getfield(L, Symbol(sname))
        @test isbitstype(T)
        @test fieldnames(T) == Tuple(Symbol(f[2]) for f in fields)
        @test collect(fieldtypes(T)) == [julia_type(f[1], h) for f in fields]
    end

    # Where a C compiler exists, compare sizes and offsets with what C makes
    # of the same header.
    cc = Sys.which("cc")
    if cc === nothing
        @test_skip "no C compiler: struct layout not compared with C"
    else
        @testset "struct layout agrees with C" begin
            dir = mktempdir()
            src = joinpath(dir, "layout.c")
            open(src, "w") do io
                println(io, "#include <stdio.h>\n#include <stddef.h>\n#include \"dirmn.h\"\nint main(void) {")
                for (sname, fields) in h.structs
                    println(io, "  printf(\"$sname %zu\\n\", sizeof($sname));")
                    for (_, f) in fields
                        println(io, "  printf(\"$sname.$f %zu\\n\", offsetof($sname, $f));")
                    end
                end
                println(io, "  return 0;\n}")
            end
            exe = joinpath(dir, "layout")
            run(`$cc -I$(dirname(HEADER)) -o $exe $src`)
            layout = Dict{String,Int}()
            for line in split(read(`$exe`, String), '\n'; keepempty = false)
                k, v = split(line)
                layout[k] = parse(Int, v)
            end
            for (sname, fields) in h.structs
                T = getfield(L, Symbol(sname))
                @test (sname, sizeof(T)) == (sname, layout[sname])
                for (i, (_, f)) in enumerate(fields)
                    @test ("$sname.$f", Int(fieldoffset(T, i))) == ("$sname.$f", layout["$sname.$f"])
                end
            end
        end
    end

    # The library's own idea of the struct size, independent of any compiler
    # here.
    r = Ref(L.dirmn_counts_options(0, 0xffffffff, 7))
    L.dirmn_counts_options_init(r)
    @test r[].size == sizeof(L.dirmn_counts_options)
    @test r[].flags == 0
    @test r[].storage == L.DIRMN_STORAGE_AUTO
end
