# groups_drimseq.R: DRIMSeq (Bioconductor, Debian r-bioc-drimseq) on the
# table bench_groups.cpp dumped, configured to dirmn_reg_test_groups' model
# (bench_groups --hold-precision): a per-gene maximum-likelihood precision
# on the full design, neither moderated (prec_moderation = "none") nor
# Cox-Reid adjusted (prec_adjust = FALSE), held in the null fit;
# proportions by condition; the likelihood-ratio test of the condition.
# Times dmPrecision + dmFit + dmTest on the first GENES genes (all of them
# take minutes), and compares the p-values with dirmn's.
#
#   Rscript bench/groups_drimseq.R DIR [GENES]
args <- commandArgs(trailingOnly = TRUE)
dir <- args[1]
n_genes <- if (length(args) > 1) as.integer(args[2]) else 300L
suppressPackageStartupMessages(library(DRIMSeq))
raw <- read.csv(file.path(dir, "counts.csv"), header = FALSE)
ids <- raw[[1]]
S <- ncol(raw) - 1L
genes <- sub("_t.*", "", ids)
keep <- genes %in% unique(genes)[seq_len(n_genes)]
counts <- data.frame(gene_id = genes[keep], feature_id = ids[keep], raw[keep, -1], check.names = FALSE)
names(counts)[-(1:2)] <- paste0("s", seq_len(S))
samples <- data.frame(sample_id = paste0("s", seq_len(S)),
                      condition = factor(rep(c("A", "B"), each = S / 2)))
d <- dmDSdata(counts = counts, samples = samples)
design <- model.matrix(~ condition, data = DRIMSeq::samples(d))
t0 <- proc.time()[["elapsed"]]
d <- dmPrecision(d, design = design, prec_moderation = "none", prec_adjust = FALSE, verbose = 0)
d <- dmFit(d, design = design, verbose = 0)
d <- dmTest(d, coef = "conditionB", verbose = 0)
secs <- proc.time()[["elapsed"]] - t0
res <- DRIMSeq::results(d)
ours <- read.csv(file.path(dir, "dirmn.csv"))
m <- merge(res[, c("gene_id", "pvalue")], ours, by.x = "gene_id", by.y = "gene")
ok <- is.finite(m$pvalue) & is.finite(m$p_value) & m$pvalue > 0 & m$p_value > 0
dl <- abs(log10(m$pvalue[ok]) - log10(m$p_value[ok]))
cat(sprintf("DRIMSeq %s (dmPrecision + dmFit + dmTest; ML precision, not moderated), 1 thread\n",
            as.character(packageVersion("DRIMSeq"))))
cat(sprintf("%-8s %-8s %10s %18s\n", "genes", "samples", "time", "time per 7764"))
cat(sprintf("%-8d %-8d %8.2f s %16.0f s\n", n_genes, S, secs, secs / n_genes * 7764))
cat(sprintf("p-values against dirmn's on %d genes: |delta log10 p| median %.3f, 90%% %.3f, max %.3f; %.0f%% within 0.05\n",
            sum(ok), median(dl), quantile(dl, 0.9), max(dl), 100 * mean(dl <= 0.05)))
