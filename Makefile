# slicesim - top-level, non-recursive Makefile (STYLE.md §8).
#   make            build ./slicesim (BUILD=opt|debug|release|asan, objects in build/$(BUILD)/);
#                   ./slicesim is always a copy of the flavour just built (build/slicesim.flavour)
#   make run        install missing Debian packages, build, run experiments/default.yaml
#   make test       install missing packages, build, run every test (Criterion)
#   make bench      engine benchmarks and whole runs at scale (release build)
#   make bench-sweep  sweep speed-up with -j and MPI ranks (release build)
#   make bench-tables rewrite docs/engine.md's measured speed tables (BENCH_BEFORE=REV: a before column)
#   make validate   reproduce the published tables
#   make docs-check fail when a generated block of README.md or docs/*.md drifts (docs-update fixes)
#   make fgd-table  print docs/traces.md's FGD side-by-side on openb (each policy, seeds 42-51; ../shared)
#   make timed-table  print docs/traces.md's openb-in-time JCT/slowdown per policy (../shared)
#   make fuzz       build libFuzzer targets (clang) and run each for FUZZ_SECONDS (-j2: two at once)
#   make fuzz-long  every target until 10^7 executions in all (not in CI; 16-32 min)
#   make calib      build the CUDA calibration programs (needs nvcc; never part of all/test)
#   make echo       print the effective flags and git revision;  V=1 echoes commands
.DEFAULT_GOAL := all
.SUFFIXES:

# opt (default): -O2 -g with asserts on; debug: -O0; release: -O2 -g -DNDEBUG; asan: ASan+UBSan.
BUILD  ?= opt
O      ?= build/$(BUILD)
CC     ?= cc
# -Werror only where the compiler is known (CI sets WERROR=1); users' compilers get warnings.
WERROR ?= 0
V      ?= 0
Q      := $(if $(filter 1,$(V)),,@)

PKGS        := gsl yaml-0.1 libcjson
PKG_CFLAGS  := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS    := $(shell pkg-config --libs $(PKGS) 2>/dev/null)
CRIT_CFLAGS := $(shell pkg-config --cflags criterion 2>/dev/null)
CRIT_LIBS   := $(shell pkg-config --libs criterion 2>/dev/null)
# Distributed sweeps (tools/sweep_mpi.c): built with Open MPI when its mpicc is installed; without
# it the build is the serial one and `mpirun ... slicesim sweep` is refused.
MPICC       := $(shell command -v mpicc 2>/dev/null)
MPI_CFLAGS  := $(if $(MPICC),$(shell $(MPICC) --showme:compile 2>/dev/null) -DSLICESIM_MPI)
MPI_LIBS    := $(if $(MPICC),$(shell $(MPICC) --showme:link 2>/dev/null))

SAN   := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
WARN  := -Wall -Wextra -Wpedantic -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
         -Wold-style-definition -Wwrite-strings -Wundef -Wformat=2 -Wdouble-promotion -Wvla
OPT.opt     := -O2 -g
OPT.debug   := -O0 -g3
OPT.release := -O2 -g -DNDEBUG
OPT.asan    := -O1 -g $(SAN)
ifeq ($(filter $(BUILD),opt debug release asan),)
$(error BUILD=$(BUILD): unknown flavour; expected one of opt, debug, release, asan)
endif
# Evaluated on every make invocation; the generated header below changes only when this does.
# Outside a git checkout the revision comes from .version, which `git archive` fills in (its
# export-subst attribute, .gitattributes); failing both, the binary says "not a git checkout".
GIT_REV     := $(shell git describe --always --dirty --abbrev=12 --exclude='*' 2>/dev/null)
ifeq ($(GIT_REV),)
GIT_REV     := $(shell sed -n 's/^\([0-9a-f]\{12\}\)[0-9a-f]*$$/\1/p' .version 2>/dev/null)
endif
ALL_CFLAGS   = -std=c11 -D_POSIX_C_SOURCE=200809L -ffp-contract=off $(WARN) \
               $(if $(filter 1,$(WERROR)),-Werror) $(OPT.$(BUILD)) -I. $(PKG_CFLAGS) \
               -MMD -MP $(CFLAGS)
ALL_LDFLAGS  = $(if $(filter asan,$(BUILD)),$(SAN)) $(LDFLAGS)
LIBS         = $(PKG_LIBS) $(MPI_LIBS) -lm

LIB_SRC   := $(sort $(wildcard sim/*.c model/*/*.c workloads/*.c \
                               experiments/*.c tools/*.c))
LIB_SRC   := $(filter-out tools/main.c,$(LIB_SRC))
LIB_OBJ   := $(LIB_SRC:%.c=$(O)/%.o)
TEST_SRC  := $(sort $(wildcard tests/unit/*.c))
TEST_OBJ  := $(TEST_SRC:%.c=$(O)/%.o)
EMBED_DATA := $(sort $(wildcard model/*/*.yaml workloads/*.yaml workloads/library/*.yaml \
                                experiments/*.yaml \
                                experiments/mig/*.yaml experiments/sharing/*.yaml))

.PHONY: all run test check bench bench-sweep bench-tables screenshot validate fuzz fuzz-long calib deps deps-test echo clean format \
        golden-update FORCE compare-repartition compare-philly docs-check docs-update fgd-table \
        timed-table

all: slicesim

# ./slicesim is the flavour this invocation built: replaced whenever it differs, and the flavour
# is recorded in build/slicesim.flavour (a later `make` puts the default flavour back).
slicesim: $(O)/slicesim FORCE
	$(Q)if ! cmp -s $< $@; then cp $< $@.tmp && mv -f $@.tmp $@ && \
	    echo "  ./slicesim is now the $(BUILD) build ($<)"; fi
	$(Q)mkdir -p build && echo $(BUILD) > build/slicesim.flavour.tmp && \
	    mv -f build/slicesim.flavour.tmp build/slicesim.flavour

# Flag stamps (as Redis's .make-settings and the kernel's .cmd files): each file holds the
# effective flags of one kind of step and is rewritten only when that text changes, so a change
# of flags (CFLAGS=, a new compiler, pkg-config's answer, Open MPI installed or removed) rebuilds
# exactly what those flags build, and an unchanged text rebuilds nothing. Every object depends on
# $(O)/flags/cc; tools/sweep_mpi.o also on .../mpi (MPI_CFLAGS), the test objects on .../test
# (Criterion's cflags), the links on .../ld (LDFLAGS and the libraries).
define stamp_rule
$(1): FORCE
	@mkdir -p $$(dir $$@)
	@printf '%s\n' '$$(subst ','\'',$(2))' > $$@.tmp
	@if cmp -s $$@.tmp $$@; then rm -f $$@.tmp; else mv -f $$@.tmp $$@; fi
endef
$(eval $(call stamp_rule,$(O)/flags/cc,$$(CC) $$(ALL_CFLAGS)))
$(eval $(call stamp_rule,$(O)/flags/mpi,$$(MPI_CFLAGS)))
$(eval $(call stamp_rule,$(O)/flags/test,$$(CRIT_CFLAGS)))
$(eval $(call stamp_rule,$(O)/flags/ld,$$(CC) $$(ALL_LDFLAGS) | $$(LIBS) | $$(CRIT_LIBS)))
$(eval $(call stamp_rule,build/fuzz/flags/cc,clang $$(FUZZ_BASE)))
$(eval $(call stamp_rule,build/fuzz/flags/mpi,$$(MPI_CFLAGS) | $$(LIBS)))
$(LIB_OBJ) $(O)/tools/main.o $(TEST_OBJ): $(O)/flags/cc
$(O)/tools/sweep_mpi.o: $(O)/flags/mpi
$(TEST_OBJ): $(O)/flags/test
$(O)/slicesim $(O)/test_unit: $(O)/flags/ld

# Build facts (git revision, flavour, flags) live in one generated header that is rewritten only
# when its text changes, so a new commit relinks just tools/buildinfo.o and nothing else.
define buildinfo_rule
$(1)/gen/buildinfo_gen.h: FORCE
	@mkdir -p $$(dir $$@)
	@printf '#define SIM_GIT_REV "%s"\n#define SIM_BUILD_FLAVOUR "%s"\n#define SIM_OPT_FLAGS "%s"\n' \
	    '$$(GIT_REV)' '$(2)' '$(3)' > $$@.tmp
	@if cmp -s $$@.tmp $$@; then rm -f $$@.tmp; else mv -f $$@.tmp $$@; fi
endef
$(eval $(call buildinfo_rule,$(O),$(BUILD),$(strip $(OPT.$(BUILD)) $(CFLAGS))))
$(eval $(call buildinfo_rule,build/fuzz,fuzz,-g -O1))
$(O)/tools/buildinfo.o: $(O)/gen/buildinfo_gen.h
$(O)/tools/buildinfo.o: private ALL_CFLAGS += -I$(O)/gen
$(O)/tools/sweep_mpi.o: private ALL_CFLAGS += $(MPI_CFLAGS)
build/fuzz/obj/tools/sweep_mpi.o: private FUZZ_BASE += $(MPI_CFLAGS)
build/fuzz/obj/tools/buildinfo.o: build/fuzz/gen/buildinfo_gen.h
build/fuzz/obj/tools/buildinfo.o: private FUZZ_BASE += -Ibuild/fuzz/gen

$(O)/slicesim: $(O)/tools/main.o $(O)/libslicesim.a
	@echo "  LD      $@"
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $(filter-out %/flags/ld,$^) $(LIBS)

$(O)/libslicesim.a: $(LIB_OBJ)
	@echo "  AR      $@"
	$(Q)rm -f $@ && ar rcs $@ $^

$(O)/%.o: %.c
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	$(Q)$(CC) $(ALL_CFLAGS) -c -o $@ $<

# Files embedded into the binary (.incbin) so that `make run` needs no data on disk.
$(O)/experiments/embedded.o: $(EMBED_DATA)

$(O)/tests/unit/%.o: tests/unit/%.c
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	$(Q)$(CC) $(ALL_CFLAGS) $(CRIT_CFLAGS) -c -o $@ $<

$(O)/test_unit: $(TEST_OBJ) $(O)/libslicesim.a
	@echo "  LD      $@"
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $(filter-out %/flags/ld,$^) $(CRIT_LIBS) $(LIBS)

deps:
	@sh tools/install-deps.sh

# The tests also drive promtool, chromium and mpirun.
deps-test:
	@SLICESIM_TEST_DEPS=1 sh tools/install-deps.sh

run: deps
	@$(MAKE) --no-print-directory all
	./slicesim run experiments/default.yaml -o results/default --force

# One Criterion binary holds every test (unit, bad input, golden, determinism), so the run ends
# in one "Synthesis" line. Tests run from the repository root and may call ./slicesim.
test check: deps-test
	@$(MAKE) --no-print-directory all $(O)/test_unit
	LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp $(O)/test_unit --jobs 2 $(TEST_ARGS)

# Rewrite tests/golden/*/expected/summary.json from this build (tolerances are kept); review
# the diff before committing it.
golden-update: deps
	@$(MAKE) --no-print-directory all $(O)/test_unit
	SLICESIM_GOLDEN_UPDATE=1 $(O)/test_unit --filter 'golden/*'

# Whole runs (`bench run`: wall and CPU time, peak memory, beside issue 7's targets) write their
# outputs here, removed at the end (the 1M-job run writes 0.7 GB, the 10M-job run 1.9 GB and a
# spill file of about 2 GB in the temporary directory).
BENCH_OUT := build/bench
bench: deps
	@$(MAKE) --no-print-directory BUILD=release all
	./slicesim bench engine --pending 1000 --events 2000000
	./slicesim bench engine --pending 1000000 --events 4000000
	./slicesim bench heap --pending 1000 --events 2000000
	./slicesim bench heap --pending 1000000 --events 4000000
	./slicesim bench fluid --pending 100000 --events 500000
	./slicesim bench run experiments/traces/openb-fgd.yaml --set policy.scheduler=fgd \
	    -o $(BENCH_OUT)/openb-fgd --target-s 1 --target-mb 200
	./slicesim bench run experiments/traces/openb-fgd.yaml --set policy.scheduler=k8s \
	    -o $(BENCH_OUT)/openb-k8s --target-s 1 --target-mb 200
	./slicesim bench run experiments/traces/openb-fgd.yaml --set policy.scheduler=backfill \
	    --set workload.trace.inflate=5.2 -o $(BENCH_OUT)/openb-backfill --target-s 1
	./slicesim bench run experiments/traces/philly-mig.yaml -o $(BENCH_OUT)/philly-mig --target-s 2
	./slicesim bench run experiments/bench/philly-full.yaml -o $(BENCH_OUT)/philly --target-s 2
	./slicesim bench run experiments/bench/nodes-30k.yaml -o $(BENCH_OUT)/nodes-30k
	./slicesim bench run experiments/bench/kube-nodes.yaml --set policy.scheduler=fgd \
	    --set 'cluster.nodes[0].count=37500' -o $(BENCH_OUT)/kube-nodes-fgd
	./slicesim bench run experiments/bench/kube-nodes.yaml --set policy.scheduler=k8s \
	    --set 'cluster.nodes[0].count=37500' -o $(BENCH_OUT)/kube-nodes-k8s
	./slicesim bench run experiments/bench/synth-10k-1m.yaml -o $(BENCH_OUT)/synth \
	    --target-s 30 --target-mb 2048
	./slicesim bench run experiments/bench/synth-100k-10m.yaml -o $(BENCH_OUT)/synth-10m \
	    --target-s 60 --target-mb 1000
	@rm -rf $(BENCH_OUT)

# docs/report.png, docs/outputs.md's picture of report.html: the default scenario's page in headless
# Chromium.
screenshot: all
	./slicesim run experiments/default.yaml -o build/docs-report --force >/dev/null
	rm -rf build/chromium-profile
	chromium --headless --no-sandbox --disable-gpu --disable-background-networking \
	    --user-data-dir=build/chromium-profile --hide-scrollbars --window-size=1150,4200 \
	    --screenshot=docs/report.png file://$(CURDIR)/build/docs-report/report.html 2>/dev/null
	rm -rf build/chromium-profile

# Speed-up of `slicesim sweep` with -j and MPI ranks, and the estimate for larger nodes.
bench-sweep: deps-test
	@$(MAKE) --no-print-directory BUILD=release all
	sh tools/bench-sweep.sh

validate: all
	./slicesim validate

# docs/engine.md's measured speed tables (engine benchmarks; CPU seconds of runs that stress the
# scheduling cycle), written by tools/bench-table.sh under a caption naming the machine, date,
# revision and this command: timings, so never compared by docs-check. BENCH_BEFORE=REV adds a
# column for that revision to the scheduling table. Needs ../shared (the traces).
BENCH_BEFORE ?=
bench-tables: deps
	@$(MAKE) --no-print-directory BUILD=release build/release/slicesim
	tools/bench-table.sh --update $(if $(BENCH_BEFORE),--before $(BENCH_BEFORE)) engine sched

# docs/repartition.md's re-partitioning comparison: one job trace on static all-balanced MIG, on MIG with
# the demand-driven re-partitioner, on 7-way time-slicing, on a mixed pool, and with MISO's policy
# (the jobs asking for any slice); the deciding metrics from run.json.
CMP_DIR := results/compare-repartition
compare-repartition: all
	CMP_DIR=$(CMP_DIR) sh experiments/examples/repartition-compare.sh

# One Philly month (experiments/traces/philly-*.yaml) on whole A100s, all-balanced MIG and 4-way
# time-slicing, one row per pool from run.json and per-class means from jobs.csv.
# PHILLY_POLICY picks the scheduler of all three (default: the scenarios' k8s).
PHILLY_POLICY ?= k8s
PHILLY_DIR := results/compare-philly
compare-philly: all
	@for v in a100 mig ts4; do ./slicesim run experiments/traces/philly-$$v.yaml -o $(PHILLY_DIR)/philly-$$v --force --set policy.scheduler=$(PHILLY_POLICY) >/dev/null || exit 1; done
	@printf '%-5s %6s %7s %11s %11s %11s %11s %11s %9s %8s\n' pool done running wait_mean_s wait_p95_s jct_mean_s jct_p50_s jct_p95_s gpus_busy sms_busy
	@for v in a100 mig ts4; do jq -r --arg v $$v '.metrics | [$$v, .counts.done, .counts.running, (.wait_s.mean|floor), (.wait_s.p95|floor), (.jct_s.mean|floor), (.jct_s.p50|floor), (.jct_s.p95|floor), (.allocation.gpus_busy_mean*1000|floor/10|tostring+"%"), (.allocation.sms_busy_mean*1000|floor/10|tostring+"%")] | @tsv' $(PHILLY_DIR)/philly-$$v/run.json; done | awk -F'\t' '{printf "%-5s %6s %7s %11s %11s %11s %11s %11s %9s %8s\n", $$1,$$2,$$3,$$4,$$5,$$6,$$7,$$8,$$9,$$10}'
	@printf '\n%-5s %-11s %6s %11s %11s %11s\n' pool class done wait_mean_s jct_mean_s work_mean_s
	@for v in a100 mig ts4; do awk -F, -v pool=$$v 'NR==1{for(i=1;i<=NF;i++)c[$$i]=i;next} $$c["outcome"]=="done"{k=$$c["class"];n[k]++;w[k]+=$$c["wait_s"];j[k]+=$$c["jct_s"];u[k]+=$$c["work_s"]} END{for(k in n)printf "%-5s %-11s %6d %11.0f %11.0f %11.0f\n",pool,k,n[k],w[k]/n[k],j[k]/n[k],u[k]/n[k]}' $(PHILLY_DIR)/philly-$$v/jobs.csv | sort; done

# Blocks of README.md and docs/*.md marked <!-- docs-check: CMD --> / <!-- docs-gen: CMD --> are
# the program's output: docs-check fails (with a diff) when they drift, docs-update rewrites them
# for review. docs-check also checks that the README's module map names every module of sim/ and
# model/ (tools/readme-map.sh).
# docs/traces.md's FGD side-by-side on openb (openb-fgd.yaml per policy, tie rule and seed 42-51,
# beside experiments/traces/fgd-reference.csv; needs ../shared):
fgd-table: all
	tools/fgd-table.sh
# docs/traces.md's openb-in-time table: JCT and slowdown per policy once sharing slows pods.
timed-table: all
	tools/timed-table.sh

DOCS_MD := README.md $(sort $(wildcard docs/*.md))
docs-check: all
	tools/docs-check.sh $(DOCS_MD)
	tools/readme-map.sh
docs-update: all
	tools/docs-check.sh --update $(DOCS_MD)

FUZZ_SECONDS ?= 60
FUZZ_SRC     := $(sort $(wildcard tests/fuzz/fuzz_*.c))
FUZZ_BIN     := $(FUZZ_SRC:tests/fuzz/%.c=build/fuzz/%)
FUZZ_BASE    := -std=c11 -D_POSIX_C_SOURCE=200809L -g -O1 -I. $(PKG_CFLAGS) \
                -fno-sanitize-recover=all
FUZZ_LIB_OBJ := $(LIB_SRC:%.c=build/fuzz/obj/%.o)
# The library is compiled once with coverage instrumentation; each target only links it.
build/fuzz/obj/%.o: %.c
	@mkdir -p $(dir $@)
	@echo "  FUZZCC  $<"
	$(Q)clang $(FUZZ_BASE) -fsanitize=fuzzer-no-link,address,undefined -MMD -MP -c -o $@ $<
build/fuzz/obj/experiments/embedded.o: $(EMBED_DATA)
$(FUZZ_LIB_OBJ): build/fuzz/flags/cc
build/fuzz/obj/tools/sweep_mpi.o $(FUZZ_BIN): build/fuzz/flags/mpi
build/fuzz/libfuzz.a: $(FUZZ_LIB_OBJ)
	$(Q)rm -f $@ && ar rcs $@ $^
build/fuzz/%: tests/fuzz/%.c build/fuzz/libfuzz.a
	@mkdir -p build/fuzz
	@echo "  FUZZ    $@"
	$(Q)clang $(FUZZ_BASE) -fsanitize=fuzzer,address,undefined -o $@ $(filter-out %/flags/mpi,$^) $(LIBS)
-include $(FUZZ_LIB_OBJ:.o=.d)
# FUZZ_SECONDS applies to each target; FUZZ_SECONDS_<target> overrides it for one target. Each
# target's run is a rule of its own (fuzz-run-<target>), so `make -j2 fuzz` (CI) runs two at
# once, each on a core of its own for its whole FUZZ_SECONDS; a run prints its lines when done.
# The longest runs first (CI gives the scenario loader 60 s; fuzz_run's seeds alone take ~30 s),
# so that the two at once end together.
FUZZ_FIRST := fuzz_scenario fuzz_run
FUZZ_RUNS  := $(addprefix fuzz-run-,$(filter $(FUZZ_FIRST),$(FUZZ_BIN:build/fuzz/%=%)) \
                $(filter-out $(FUZZ_FIRST),$(FUZZ_BIN:build/fuzz/%=%)))
.PHONY: $(FUZZ_RUNS) fuzz-build
fuzz: $(FUZZ_RUNS)
fuzz-build: $(FUZZ_BIN)
$(FUZZ_RUNS): fuzz-run-%: build/fuzz/%
	@n=$*; mkdir -p build/fuzz/corpus-$$n tests/fuzz/corpus/$$n; \
	  secs=$$(eval echo \$${FUZZ_SECONDS_$$n:-$(FUZZ_SECONDS)}); \
	  $< -max_total_time=$$secs -rss_limit_mb=2048 -timeout=10 -print_final_stats=0 \
	      build/fuzz/corpus-$$n tests/fuzz/corpus/$$n > build/fuzz/$$n.log 2>&1 \
	    || { printf '== %s (%s s) failed:\n%s\n' $$n $$secs "$$(tail -n 40 build/fuzz/$$n.log)"; exit 1; }; \
	  printf '== %s (%s s)\n%s\n' $$n $$secs "$$(grep -E '^(#[0-9]+ *DONE|Done)' build/fuzz/$$n.log | tail -n 1)"

# make fuzz-long (not in CI): every target in rounds of FUZZ_LONG_SECONDS each until they have
# made FUZZ_LONG_RUNS executions in all (one or two rounds of 16 min on 2 cores; half with -j2).
FUZZ_LONG_SECONDS ?= 60
FUZZ_LONG_RUNS    ?= 10000000
fuzz-long: $(FUZZ_BIN)
	@total=0; round=0; while [ $$total -lt $(FUZZ_LONG_RUNS) ]; do round=$$((round + 1)); \
	  $(MAKE) --no-print-directory fuzz FUZZ_SECONDS=$(FUZZ_LONG_SECONDS) \
	    > build/fuzz/long-$$round.log 2>&1 || { cat build/fuzz/long-$$round.log; exit 1; }; \
	  n=$$(grep -Eo '^Done [0-9]+' build/fuzz/long-$$round.log | awk '{s += $$2} END {print s + 0}'); \
	  [ "$$n" -gt 0 ] || { echo "fuzz-long: round $$round made no execution"; exit 1; }; \
	  total=$$((total + n)); echo "fuzz-long round $$round: $$n executions ($$total in all)"; \
	done

NVCC ?= nvcc
calib:
	$(MAKE) -C calib NVCC=$(NVCC)

echo:
	@echo "BUILD=$(BUILD) O=$(O) CC=$(CC)"
	@echo "CFLAGS=$(ALL_CFLAGS)"
	@echo "LDFLAGS=$(ALL_LDFLAGS)"
	@echo "LIBS=$(LIBS)"
	@echo "GIT_REV=$(if $(GIT_REV),$(GIT_REV),not a git checkout)"

format:
	clang-format -i $(LIB_SRC) tools/main.c $(wildcard */*.h */*/*.h) $(TEST_SRC)

clean:
	rm -rf build slicesim slicesim.tmp

-include $(LIB_OBJ:.o=.d) $(TEST_OBJ:.o=.d) $(O)/tools/main.d
