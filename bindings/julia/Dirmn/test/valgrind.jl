# The ccall layer under valgrind (issue #24): valgrind_script.jl, which
# creates, uses and closes every kind of handle (close() from progress
# callbacks included), runs in its own julia under memcheck with a full leak
# check, and no record may be libdirmn's.
#
# Julia 1.5 under memcheck (--smc-check=all, for the JIT's code) reports
# about a thousand records of its own: blocks of the JIT (LLVM metadata),
# the GC and startup that it frees only at exit or never, a few reads in
# ld.so and libunwind. They are told apart by their innermost frame outside
# the C and C++ runtimes: a record counts when that frame is libdirmn's (a
# block libdirmn allocated and nobody freed, an invalid access inside it);
# one whose innermost frame is Julia's (libjulia, LLVM, the system image,
# JIT code, shown as "???") does not, even with libdirmn further out (the
# JIT compiling a progress callback that libdirmn called). Before issue #24's
# fix the three contexts closed from callbacks were reported (a definitely
# lost dirmn_context and its backend, and the thread stacks of its pool).
#
# Run where scripts/test-julia.sh found valgrind (DIRMN_VALGRIND); about
# three minutes on two cores.

# The owner of a valgrind record: "dirmn", "julia" or "other".
function valgrind_owner(rec::AbstractString)
    for l in split(rec, '\n')
        occursin(r"^\s+(at|by) 0x", l) || continue
        occursin("libdirmn", l) && return "dirmn"
        occursin(r"libjulia|libLLVM|sys\.so|: \?\?\?$|: julia_|: japi|: jfptr", l) && return "julia"
    end
    return "other"
end

# The records of a memcheck log (its blank-line separated blocks, without
# the "==pid==" prefixes and the summaries).
function valgrind_records(log::AbstractString)
    text = join((replace(l, r"^==\d+== ?" => "") for l in split(log, '\n')), '\n')
    recs = String[strip(r) for r in split(text, r"\n\s*\n") if !isempty(strip(r))]
    return filter(r -> !occursin(r"^(HEAP|LEAK|ERROR) SUMMARY", r), recs)
end

@testset "valgrind: the ccall layer loses and corrupts nothing" begin
    vg = get(ENV, "DIRMN_VALGRIND", "")
    if isempty(vg)
        @test_skip "valgrind not run (scripts/test-julia.sh sets DIRMN_VALGRIND where it has valgrind)"
    else
        project = dirname(@__DIR__)
        script = joinpath(@__DIR__, "valgrind_script.jl")
        log = tempname()
        cmd = `$vg --smc-check=all --error-limit=no --leak-check=full
               --show-leak-kinds=definite,possible --errors-for-leak-kinds=definite,possible
               --num-callers=40 --log-file=$log
               $(Base.julia_cmd()) --startup-file=no --project=$project $script`
        out = IOBuffer()
        t = @elapsed p = run(pipeline(ignorestatus(cmd); stdout = out, stderr = out))
        text = String(take!(out))
        @test p.exitcode == 0
        @test occursin("valgrind_script: done", text)
        p.exitcode == 0 || println(text)
        vlog = isfile(log) ? read(log, String) : ""
        @test occursin("LEAK SUMMARY", vlog)      # the leak check ran
        recs = valgrind_records(vlog)
        mine = filter(r -> valgrind_owner(r) == "dirmn", recs)
        @test isempty(mine)
        for r in mine
            println("valgrind, libdirmn's:\n", r, "\n")
        end
        println("valgrind: $(length(recs)) records, $(length(mine)) libdirmn's, " *
                "$(count(r -> valgrind_owner(r) == "julia", recs)) Julia's own " *
                "($(round(t; digits = 1)) s)")
        isfile(log) && rm(log)
    end
end
