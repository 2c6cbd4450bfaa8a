# Test suite of the Dirmn Julia package.
#
# Needs libdirmn: set DIRMN_LIBRARY_PATH to the library, its directory or an
# install prefix. DIRMN_INCLUDE_DIR may name the directory of dirmn.h (default:
# the repository's capi/include). DIRMN_VALGRIND, the path of valgrind, runs
# the ccall layer under memcheck too (valgrind.jl; scripts/test-julia.sh sets
# it where valgrind exists). Run with Pkg.test() or directly:
#   julia --project=bindings/julia/Dirmn bindings/julia/Dirmn/test/runtests.jl
# Ends with a line "Dirmn.jl: N passed, N failed, N skipped" and a non-zero
# exit status on any failure or error.

using Dirmn
using Test
using Random
using SparseArrays
using LinearAlgebra
using Libdl
import Statistics

include("reference.jl")

# Counts in a DefaultTestSet tree, as (passed, failed, errored, broken).
function tally(ts)
    p, f, e, b = ts.n_passed, 0, 0, 0
    for r in ts.results
        if r isa Test.Fail
            f += 1
        elseif r isa Test.Error
            e += 1
        elseif r isa Test.Broken
            b += 1
        elseif r isa Test.AbstractTestSet
            cp, cf, ce, cb = tally(r)
            p += cp; f += cf; e += ce; b += cb
        end
    end
    return p, f, e, b
end

result = try
    @testset "Dirmn" begin
        include("header.jl")
        include("values.jl")
        include("errors.jl")
        include("fit.jl")
        include("mixture.jl")
        include("mixture_select.jl")
        include("stats.jl")
        include("overdispersion.jl")
        include("regression.jl")
        include("regression_precision.jl")
        include("regression_groups.jl")
        include("sample.jl")
        include("group_test.jl")
        include("power_groups.jl")
        include("names.jl")
        include("lifecycle.jl")
        include("threads.jl")
        include("callbacks.jl")
        include("communicator.jl")
        include("valgrind.jl")
        include("gpu.jl")
    end
catch err
    # A top-level testset with failures throws after printing its summary.
    err isa Test.TestSetException || rethrow()
    err
end

passed, failed, errored, broken = result isa Test.TestSetException ?
    (result.pass, result.fail, result.error, result.broken) : tally(result)
println("Dirmn.jl: $passed passed, $(failed + errored) failed, $broken skipped")
exit(failed + errored == 0 ? 0 : 1)
