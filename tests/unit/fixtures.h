/* tests/unit/fixtures.h - shared test fixtures for the model tests.
 *
 * test_gpu(): a made-up GPU type "TEST-GPU" (not catalog data): 100 SMs, 8000 bytes, 7 compute
 * and 8 memory slices, MIG profiles "1g.x" (10 SMs, 1000 bytes), "2g.y" (20 SMs, 2000 bytes)
 * and "1g.x+me" (a media-extension variant of 1g.x). Tests of device-plugin semantics and
 * bookkeeping use it so that they pin no published figure.
 */
#ifndef SIMPROJ_TESTS_UNIT_FIXTURES_H
#define SIMPROJ_TESTS_UNIT_FIXTURES_H

#include "model/hw/catalog.h"

gpu_type test_gpu(void);

#endif
