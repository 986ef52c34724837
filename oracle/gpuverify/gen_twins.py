#!/usr/bin/env python3
"""Writes the CUDA twins of the ported GPUVerify kernels (oracle/gpuverify/*.cu) and labels.tsv.

Usage: gen_twins.py GPUVERIFY_CHECKOUT_TESTSUITE_CUDA_DIR OUT_DIR
Each twin is GPUVerify's kernel.cu with its first comment lines and GPUVerify's annotations (__requires,
__ensures, __assert, __invariant, __global_invariant, __requires_fresh_array) removed, followed by a host main()
that allocates the same inputs as the Java port (dev.jpipeline.simt.suite), launches with the same dimensions,
synchronizes and prints "ok" or the CUDA error.
"""
import os
import re
import sys

PRELUDE = r'''
// ---- host side (jpipeline issue 29): same inputs and launch as the Java port ----
#include "host.cuh"
'''

# name: (GPUVerify path, label, grid, block, defines, host body, note)
# Dims are "x" or "x,y"; the label's dims are in the comment at the top of the twin (kept from GPUVerify).
K = {}

def k(name, path, label, grid, block, host, defines='', note=''):
    K[name] = (path, label, grid, block, defines, host, note)

def dim(d):
    return 'dim3(%s)' % d

# ---------------------------------------------------------------- racy (GPUVerify: xfail, a race)
k('fail_tests_race_on_shared', 'fail_tests/race_on_shared', 'RACY', '1', '16',
  'foo<<<G, B>>>();')
k('fail_tests_shared_int', 'fail_tests/shared_int', 'RACY', '2', '16',
  'foo<<<G, B>>>();', note='dims reduced from 64x64')
for kind in ['array', 'inherit', 'struct_char', 'struct_float', 'struct_nested']:
    ty = 'char' if kind == 'struct_char' else 'float'
    if kind == 'array':
        host = 's q; memset(&q, 0, sizeof q); q.p[4] = devArray<float>(64);\n    foo<<<G, B>>>(q);'
    elif kind == 'inherit':
        host = 't q; q.p = devArray<float>(64);\n    foo<<<G, B>>>(q);'
    elif kind == 'struct_nested':
        host = 't q; q.v.p = devArray<float>(64);\n    foo<<<G, B>>>(q);'
    else:
        host = 's q; q.p = devArray<%s>(64);\n    foo<<<G, B>>>(q);' % ty
    k('fresh_arrays_fail_' + kind, 'fresh_arrays/fail/' + kind, 'RACY', '2', '16', host,
      note='dims reduced from 2048x64 (2048 threads per block is not a valid CUDA launch)')
    if kind != 'struct_nested':
        k('fresh_arrays_pass_' + kind, 'fresh_arrays/pass/' + kind, 'RACE_FREE', '2', '16', host,
          note='dims reduced from 2048x64 (2048 threads per block is not a valid CUDA launch)')
k('loop_unwind', 'loop_unwind', 'RACY', '2', '16',
  'helloCUDA<<<G, B>>>(devArray<float>(10));', note='dims reduced from 512x64')
k('misc_fail_miscfail3', 'misc/fail/miscfail3', 'RACY', '1', '32',
  'inline_test<<<G, B>>>(devArray<int>(33), 1);', note='dims reduced from 1024x1; offset = 1 (the racy path)')
k('misc_fail_miscfail4', 'misc/fail/miscfail4', 'RACY', '1', '32',
  'inline_test<<<G, B>>>(devArray<int>(33), 1);', note='dims reduced from 1024x1; offset = 1 (the racy path)')
k('param_values_value_causing_race', 'param_values/value_causing_race', 'RACY', '1', '256',
  'example<<<G, B>>>(devArray<float>(256), 185);',
  note='blockDim reduced from 512 to 256 (threads 15 and 200 still exist); x = 185, the value GPUVerify names')
k('pointeranalysistests_testbasicaliasing', 'pointeranalysistests/testbasicaliasing', 'RACY', '2', '16',
  'foo<<<G, B>>>(devArray<int>(101), devArray<int>(101), devArray<int>(101));', note='dims reduced from 64x64')
k('pointertests_cast', 'pointertests/cast', 'RACY', '2', '16',
  'foo<<<G, B>>>(devArray<int>(32));', note='dims reduced from 32x64')
k('warpsync_bad_inter_group', 'warpsync/bad_inter_group', 'RACY', '2', '16',
  'foo<<<G, B>>>(devArray<int>(48));', note='dims reduced from 128x128; the race is between blocks')
k('warpsync_broken_shuffle', 'warpsync/broken_shuffle', 'RACY', '1', '64',
  'shuffle<<<G, B>>>(devArray<int>(64));', note='dims reduced from 1024x1')
k('cooperative_groups_fail_race', 'cooperative_groups/fail/race', 'RACY', '2', '32',
  'race<<<G, B>>>(devArray<int>(65));')
k('globalarray_fail', 'globalarray/fail', 'RACY', '1', '8',
  'int zeros[8] = {0};\n    cudaMemcpyToSymbol(A, zeros, sizeof zeros);  // the host changes A: the racy path\n'
  '    globalarray<<<G, B>>>(devArray<float>(1));')
k('memcpy_fail_arrayofstruct', 'memcpy/fail_arrayofstruct', 'RACY', '1', '2',
  'k<<<G, B>>>((pair_t *) devBytes(43 * sizeof(pair_t)));')
k('memcpy_fail_overstep', 'memcpy/fail_overstep', 'RACY', '1', '2',
  'k<<<G, B>>>((s_t *) devBytes(24), (s_t *) devBytes(24));')
k('memcpy_lentoobig', 'memcpy/lentoobig', 'RACY', '1', '2',
  'k<<<G, B>>>((s_t *) devBytes(12), (s_t *) devBytes(12));')
k('memcpy_notexactdiv', 'memcpy/notexactdiv', 'RACY', '1', '2',
  'k<<<G, B>>>((s_t *) devBytes(12), (s_t *) devBytes(12));')
k('atomics_add_zero', 'atomics/add_zero', 'RACY', '1', '2',
  'race_test<<<G, B>>>(devArray<unsigned int>(1, 0), devArray<int>(2));')
k('atomics_add_tid', 'atomics/add_tid', 'RACY', '1', '2',
  'race_test<<<G, B>>>(devArray<unsigned int>(1, 0), devArray<int>(2));')
# ---------------------------------------------------------------- barrier divergence
k('cooperative_groups_fail_divergence_thread_block', 'cooperative_groups/fail/divergence_thread_block',
  'BARRIER_DIVERGENCE', '1', '32', 'race<<<G, B>>>(devArray<int>(34));')
# ---------------------------------------------------------------- GPUVerify: pass, under an assumption CUDA lacks
k('warpsync_shuffle', 'warpsync/shuffle', 'ASSUMED_RACE_FREE', '1', '64', 'shuffle<<<G, B>>>(devArray<int>(64));',
  note='blockDim reduced from 512; passes only with --warp-sync=32 (lanes in lockstep), which sm_70+ does not give')
k('warpsync_scan_warp', 'warpsync/scan_warp', 'ASSUMED_RACE_FREE', '1', '64', 'scan<<<G, B>>>(devArray<int>(64));',
  note='blockDim reduced from 512; passes only with --warp-sync=32 (lanes in lockstep), which sm_70+ does not give')
k('warpsync_intragroup_scan', 'warpsync/intragroup_scan', 'ASSUMED_RACE_FREE', '1', '64',
  'scan<<<G, B>>>(devArray<int>(64));',
  note='blockDim reduced from 512; passes only with --warp-sync=32 (lanes in lockstep), which sm_70+ does not give')
k('pointertests_test_copy_between_pointers', 'pointertests/test_copy_between_pointers', 'ASSUMED_RACE_FREE', '2',
  '16', 'foo<<<G, B>>>(devArray<int>(1));',
  note='dims reduced from 64x64; passes only because GPUVerify takes writes of one value by all threads as benign')
# ---------------------------------------------------------------- race-free (GPUVerify: pass)
k('align', 'align', 'RACE_FREE', '2', '2', 'align_test<<<G, B>>>((pair *) devBytes(4 * sizeof(pair)));')
k('basicbarrier', 'basicbarrier', 'RACE_FREE', '2', '16', 'foo<<<G, B>>>();', note='dims reduced from 64x64')
k('barrierconditionalkernelparam', 'barrierconditionalkernelparam', 'RACE_FREE', '2', '16',
  'foo<<<G, B>>>(0);', note='dims reduced from 64x64; x = 0, so every thread reaches the barrier')
k('basicglobalarray', 'basicglobalarray', 'RACE_FREE', '1', '32', 'foo<<<G, B>>>(devArray<int>(32));',
  note='blockDim reduced from 64')
k('ctimesgid', 'ctimesgid', 'RACE_FREE', '2', '16', 'k<<<G, B>>>(devArray<unsigned int>(32 * WIDTH));',
  defines='#define WIDTH 8', note='dims reduced from 64x16, WIDTH from 256 to 8')
k('ctimeslid', 'ctimeslid', 'RACE_FREE', '2', '16', 'k<<<G, B>>>();', defines='#define WIDTH 8',
  note='dims reduced from 64x16, WIDTH from 256 to 8; the shared array shrunk from 16384 to 128 (64 KiB of '
       'static shared memory does not compile)')
k('cooperative_groups_pass_block_barrier', 'cooperative_groups/pass/block_barrier', 'RACE_FREE', '1', '32',
  'race<<<G, B>>>(devArray<int>(33));')
k('large_constant_array', 'large_constant_array', 'RACE_FREE', '2', '32', 'kernel<<<G, B>>>();',
  note='blockDim reduced from 2048 (not a valid CUDA launch)')
k('local2darrayaccess', 'local2darrayaccess', 'RACE_FREE', '2', '10', 'foo<<<G, B>>>();',
  note='gridDim reduced from 64')
k('localarrayaccess', 'localarrayaccess', 'RACE_FREE', '2', '10', 'foo<<<G, B>>>();',
  note='gridDim reduced from 64; thread 9 reads A[10], never written (uninitialized, not a race)')
k('memcpy_arrayofstruct', 'memcpy/arrayofstruct', 'RACE_FREE', '1', '2',
  'k<<<G, B>>>((pair_t *) devBytes(2 * sizeof(pair_t)));')
k('memcpy_lentoosmall', 'memcpy/lentoosmall', 'RACE_FREE', '1', '2',
  'k<<<G, B>>>((s_t *) devBytes(12), (s_t *) devBytes(12));')
k('memcpy_mismatch', 'memcpy/mismatch', 'RACE_FREE', '1', '2',
  'k<<<G, B>>>((s1_t *) devBytes(8), (s2_t *) devBytes(8));')
k('memset_initstruct', 'memset/initstruct', 'RACE_FREE', '1', '16',
  'kernel<<<G, B>>>((uint4 *) devBytes(16 * sizeof(uint4)));', note='blockDim reduced from 32')
k('memset_simplification', 'memset_simplification', 'RACE_FREE', '2', '16',
  'foo<<<G, B>>>((s *) devBytes(32 * sizeof(s)));', note='dims reduced from 2048x64')
k('misc_pass_misc1', 'misc/pass/misc1', 'RACE_FREE', '1', '64', 'helloCUDA<<<G, B>>>(143);',
  note='blockDim reduced from 512; x = 143 (its __requires); F is read but never written (uninitialized)')
k('misc_pass_misc2', 'misc/pass/misc2', 'RACE_FREE', '1', '32', 'helloCUDA<<<G, B>>>(devArray<int>(32));',
  note='blockDim reduced from 512')
k('misc_pass_misc8', 'misc/pass/misc8', 'RACE_FREE', '1', '32',
  'foo<<<G, B>>>(devArray<char>(32), devArray<char>(32), 1);', note='blockDim reduced from 1024; c = 1')
k('mul24', 'mul24', 'RACE_FREE', '2', '16', 'mul24_test<<<G, B>>>(devArray<int>(32), devArray<int>(32));',
  note='dims reduced from 1024x1024')
k('noraceduetoreturn', 'noraceduetoreturn', 'RACE_FREE', '1', '32', 'foo<<<G, B>>>(devArray<float>(8));',
  note='blockDim reduced from 64')
k('pointers_in_structs_test1', 'pointers_in_structs/test1', 'RACE_FREE', '2', '2',
  'foo<<<G, B>>>(devArray<int>(4));')
k('pointers_in_structs_test2', 'pointers_in_structs/test2', 'RACE_FREE', '2', '2',
  'S a; a.p = devArray<int>(4);\n    foo<<<G, B>>>(a);')
k('pointers_in_structs_test3', 'pointers_in_structs/test3', 'RACE_FREE', '2', '2',
  'S a; a.s.p = devArray<int>(4);\n    foo<<<G, B>>>(a);')
k('pointers_in_structs_test4', 'pointers_in_structs/test4', 'RACE_FREE', '2', '2',
  'S a; a.s.p = devArray<int>(4); a.s.q = devArray<int>(4);\n    foo<<<G, B>>>(a);')
for t in ['test1', 'test2', 'test4', 'test5', 'test6']:
    k('pointertests_' + t, 'pointertests/' + t, 'RACE_FREE', '1', '32', 'foo<<<G, B>>>(devArray<int>(32));',
      note='blockDim reduced from 64')
k('pointertests_test3', 'pointertests/test3', 'RACE_FREE', '1', '32', 'foo<<<G, B>>>(devArray<int>(33));',
  note='blockDim reduced from 64')
for t in ['test8', 'test9', 'test10', 'test11']:
    k('pointertests_' + t, 'pointertests/' + t, 'RACE_FREE', '2', '10', 'foo<<<G, B>>>();',
      note='gridDim reduced from 64')
k('pointertests_test13', 'pointertests/test13', 'RACE_FREE', '1', '32', 'foo<<<G, B>>>(devArray<int>(32));',
  note='blockDim reduced from 64')
k('pointertests_test_pass_value_from_array', 'pointertests/test_pass_value_from_array', 'RACE_FREE', '2', '16',
  'foo<<<G, B>>>(devArray<int>(1));', note='dims reduced from 64x64')
k('pointeranalysistests_testinterprocedural2', 'pointeranalysistests/testinterprocedural2', 'RACE_FREE', '2',
  '16', 'foo<<<G, B>>>(devArray<int>(1, 5), devArray<int>(1));', note='dims reduced from 64x64; *p = 5')
k('pointeranalysistests_testinterprocedural3', 'pointeranalysistests/testinterprocedural3', 'RACE_FREE', '2',
  '16', 'foo<<<G, B>>>(devArray<int>(1), devArray<int>(1, 1));', note='dims reduced from 64x64; *q = 1')
k('memcpy_simplification_array_element_passed_to_call1', 'memcpy_simplification/array_element_passed_to_call1',
  'RACE_FREE', '2', '16', 'foo<<<G, B>>>((s *) devArray<int>(2));',
  note='dims reduced from 256x128; bar, only declared in GPUVerify, is given an empty body so that it links')
k('memcpy_simplification_array_element_passed_to_call2', 'memcpy_simplification/array_element_passed_to_call2',
  'RACE_FREE', '2', '16', 'foo<<<G, B>>>((s *) devArray<int>(2));',
  note='dims reduced from 256x128; bar, only declared in GPUVerify, is given an empty body so that it links')
k('reduced_strength_blockwise', 'reduced_strength_blockwise', 'RACE_FREE', '2', '16',
  'k<<<G, B>>>(devArray<int>(2 * WIDTH));', defines='#define WIDTH 40',
  note='blockDim reduced from 256, WIDTH from 2064 to 40 (still not a multiple of blockDim)')
k('reduced_strength_with_requires', 'reduced_strength_with_requires', 'RACE_FREE', '1', '16',
  'foo<<<G, B>>>(devArray<float>(1600), 16);', note='blockDim reduced from 1024; sz = blockDim (its __requires)')
k('scope', 'scope', 'RACE_FREE', '1', '64', 'k<<<G, B>>>(devArray<unsigned int>(64));',
  note='gridDim reduced from 64; s_Hist is read beyond the part that was flushed (uninitialized)')
k('store_in_byval_function', 'store_in_byval_function', 'RACE_FREE', '2', '16',
  'int *p = devArray<int>(32);\n    s q; memcpy(&q, &p, sizeof p);  // s has one private member, int *p\n'
  '    foo<<<G, B>>>(q);', note='dims reduced from 2048x64')
k('ternarytest', 'ternarytest', 'RACE_FREE', '1', '32', 'foo<<<G, B>>>(devArray<float>(64));',
  note='blockDim reduced from 64')
k('ternarytest2', 'ternarytest2', 'RACE_FREE', '1', '32', 'foo<<<G, B>>>(devArray<float>(64));',
  note='blockDim reduced from 64')
k('test_for_get_group_id', 'test_for_get_group_id', 'RACE_FREE', '1', '32', 'foo<<<G, B>>>(devArray<float>(32));',
  note='blockDim reduced from 64')
k('transitiveclosure', 'transitiveclosure', 'RACE_FREE', '1', '8,8',
  'unsigned int *graph = devArray<unsigned int>(64 * 64, 0);\n'
  '    unsigned int edges[8] = {1, 1, 0, 1, 0, 0, 1, 0};  // row 0 of the first 8x8 tile: some edges\n'
  '    cudaMemcpy(graph, edges, sizeof edges, cudaMemcpyHostToDevice);\n'
  '    transitive_closure_stage1_kernel<<<G, B>>>(graph, 0);')
k('warpsize', 'warpsize', 'RACE_FREE', '2', '16', 'foo<<<G, B>>>(devArray<int>(32));', note='dims reduced from 2048x64')
k('atomics_add_one', 'atomics/add_one', 'RACE_FREE', '1', '2',
  'race_test<<<G, B>>>(devArray<unsigned int>(1, 0), devArray<int>(2));')

ANNOTATIONS = ['__requires_fresh_array', '__global_invariant', '__invariant', '__requires', '__ensures', '__assert']


def strip_annotations(src):
    out = src
    for name in ANNOTATIONS:
        while True:
            m = re.search(r'(/\*\w\*/)?' + name + r'\s*\(', out)
            if not m:
                break
            i = m.end()
            depth = 1
            while depth:
                depth += {'(': 1, ')': -1}.get(out[i], 0)
                i += 1
            j = i
            while j < len(out) and out[j] in ' \t':
                j += 1
            if j < len(out) and out[j] in ',;':
                j += 1
            # drop the whole line when nothing else is on it
            ls = out.rfind('\n', 0, m.start()) + 1
            le = out.find('\n', j)
            if out[ls:m.start()].strip() == '' and out[j:le].strip() == '':
                out = out[:ls] + out[le + 1:]
            else:
                out = out[:m.start()] + out[j:]
    return out


def main():
    src_dir, out_dir = sys.argv[1], sys.argv[2]
    rows = ['name\tlabel\tgrid\tblock\tgpuverify_path\tgpuverify_label\tnote']
    for name, (path, label, grid, block, defines, host, note) in sorted(K.items()):
        text = open(os.path.join(src_dir, path, 'kernel.cu')).read()
        lines = text.split('\n')
        header = []
        while lines and lines[0].startswith('//'):
            header.append(lines.pop(0))
        body = strip_annotations('\n'.join(lines))
        extra = ''
        if 'cooperative_groups' in path:
            extra = ('#include <cooperative_groups.h>\n'
                     '// GPUVerify models cooperative_groups::sync as synchronize(group)\n'
                     'namespace cooperative_groups {\n'
                     'template <class Group> __device__ void synchronize(Group g) { g.sync(); }\n'
                     '}\n')
        if 'memcpy_simplification' in path:
            body = body.replace('__device__ void bar(s x);', '__device__ void bar(s x) {}  // body added: see README')
        if path == 'ctimeslid':
            body = body.replace('A[16384]', 'A[16 * WIDTH]  /* was A[16384]: see README */')
        if 'curand' in path:
            raise SystemExit('curand kernels are not ported')
        out = ['// jpipeline issue 29: CUDA twin of GPUVerify testsuite/CUDA/%s/kernel.cu' % path,
               '// (c) the GPUVerify authors, Microsoft Public License (Ms-PL): see README.md and LICENSE-GPUVerify.',
               '// GPUVerify label and options, as in the original:']
        out += ['// ' + h[2:] if False else h for h in header]
        out.append('// jpipeline label: %s; launch used here: grid (%s), block (%s)%s' % (
            label, grid, block, ('; ' + note) if note else ''))
        out.append('')
        if defines:
            out.append(defines)
        if extra:
            out.append(extra)
        out.append(body.strip('\n'))
        out.append(PRELUDE)
        out.append('int main() {')
        out.append('    dim3 G = %s, B = %s;' % (dim(grid), dim(block)))
        out.append('    ' + host)
        out.append('    return finish();')
        out.append('}')
        with open(os.path.join(out_dir, name + '.cu'), 'w') as f:
            f.write('\n'.join(out) + '\n')
        gl = header[0][2:]
        rows.append('\t'.join([name, label, grid, block, 'testsuite/CUDA/' + path, gl, note]))
    with open(os.path.join(out_dir, 'labels.tsv'), 'w') as f:
        f.write('\n'.join(rows) + '\n')
    print(len(K), 'twins')


main()
