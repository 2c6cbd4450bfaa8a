library(testthat)
library(dirmn)

test_check("dirmn")
