// REQUIRES: x86_64-host
// Causal diagonals and windows inside tiles: the packed Q K^T kernel skips
// the register blocks none of whose rows reads one of their keys (leaving
// those scores unwritten, for the softmax's lane masks to hide), and each
// register block's P V runs over the keys its rows read only. Every entry below has
// tiles cut by a diagonal or a window at sizes that are not multiples of the
// register tiles (8 x 32 on AVX-512, 6 x 16 on AVX2, 4 rows on x86-64), and
// runs on each target this host runs (AVX-512 where it has it) against the
// f64 reference, with the form's tiles and with tiles that put the diagonal
// across a tile at an offset.
//
// RUN: for e in causal_top_left causal_bottom_right window window_causal_kv_len causal_bf16 causal_f16 paged64 paged16; do \
// RUN:   for t in host haswell x86-64; do \
// RUN:     for tiles in "" "--tile-q=48 --tile-k=64"; do \
// RUN:       cpu=; if [ $t != host ]; then cpu=--target-cpu=$t; fi; \
// RUN:       attn-run %s --entry=$e --form=fused $cpu $tiles --verify --reps=0 --seed=3 > /dev/null && echo ok || echo FAIL $e $t $tiles; \
// RUN:     done; done; done | sort | uniq -c | FileCheck %s --implicit-check-not=FAIL
// The sigmoid normalization and a bias read every score through a logit
// generic: their Q K^T computes whole tiles; P V still runs over each
// block's keys.
// RUN: for e in causal_bias window_sigmoid; do \
// RUN:   attn-run %s --entry=$e --form=fused --verify --reps=0 --seed=3 > /dev/null && echo ok || echo FAIL $e; \
// RUN: done | sort | uniq -c | FileCheck %s --check-prefix=LOGITS --implicit-check-not=FAIL
// The decode (split-KV) form takes the same packed kernels for query tiles
// of at least a register tile of rows.
// RUN: for e in causal_bottom_right window_causal_kv_len paged16; do for t in host haswell; do \
// RUN:   cpu=; if [ $t != host ]; then cpu=--target-cpu=$t; fi; \
// RUN:   attn-run %s --entry=$e --form=decode --splits=3 $cpu --verify --reps=0 --seed=3 > /dev/null && echo ok || echo FAIL $e $t; \
// RUN: done; done | sort | uniq -c | FileCheck %s --check-prefix=DECODE --implicit-check-not=FAIL
//
// Keys no query row reads contribute nothing even when their K rows hold NaN
// and their V rows infinities: past kv_len, before every row's window, and
// in pages no row reads or no page table names. The register blocks' P V
// bounds stop at the keys their rows read (bf16 pairs included: in the
// low-precision entries batch 1 reads from key 19 and batch 0 up to key
// 208, so a pair of keys straddles each end). The paged cache's page table
// runs backwards (batch 0 logical page p in pool page 31 - p, batch 1 in
// 79 - p; pool pages 32-47 unreferenced), so a kernel that ignored it would
// read poisoned rows. The inputs are the seeded random ones
// with those rows overwritten; a run that read one of them would put NaN or
// inf into its rows of the output, which the reference does not have.
// RUN: %python %S/Inputs/write_npy.py %t.len.npy i4 2 250,173
// RUN: attn-run %s --entry=window_causal_kv_len --input kv_len=%t.len.npy --save-input=q=%t.q.npy --save-input=k=%t.k.npy --save-input=v=%t.v.npy --reps=0 --seed=5 > /dev/null
// RUN: %python %S/Inputs/poison_rows.py %t.k.npy %t.k.npy nan 0:0-80,1:0-3,1:173-250
// RUN: %python %S/Inputs/poison_rows.py %t.v.npy %t.v.npy inf 0:0-80,1:0-3,1:173-250
// RUN: %python %S/Inputs/write_npy.py %t.pt.npy i4 2x32 31,30,29,28,27,26,25,24,23,22,21,20,19,18,17,16,15,14,13,12,11,10,9,8,7,6,5,4,3,2,1,0,79,78,77,76,75,74,73,72,71,70,69,68,67,66,65,64,63,62,61,60,59,58,57,56,55,54,53,52,51,50,49,48
// RUN: %python %S/Inputs/write_npy.py %t.plen.npy i4 2 500,301
// RUN: attn-run %s --entry=paged16 --input page_table=%t.pt.npy --input kv_len=%t.plen.npy --save-input=q=%t.pq.npy --save-input=k=%t.pk.npy --save-input=v=%t.pv.npy --reps=0 --seed=5 > /dev/null
// RUN: %python %S/Inputs/poison_rows.py %t.pk.npy %t.pk.npy nan 12-32:0-16,11:0-10,0:4-16,72-80:0-16,71:0-3,61:13-16,48-61:0-16,32-48:0-16
// RUN: %python %S/Inputs/poison_rows.py %t.pv.npy %t.pv.npy -inf 12-32:0-16,11:0-10,0:4-16,72-80:0-16,71:0-3,61:13-16,48-61:0-16,32-48:0-16
// RUN: %python %S/Inputs/write_npy.py %t.llen.npy i4 2 209,150
// RUN: for e in bf16 f16; do \
// RUN:   attn-run %s --entry=window_kv_len_$e --input kv_len=%t.llen.npy --save-input=q=%t.$e.q.npy --save-input=k=%t.$e.k.npy --save-input=v=%t.$e.v.npy --reps=0 --seed=5 > /dev/null && \
// RUN:   %python %S/Inputs/poison_rows.py %t.$e.k.npy %t.$e.k.npy nan 0:0-78,0:209-211,1:0-19,1:150-211 && \
// RUN:   %python %S/Inputs/poison_rows.py %t.$e.v.npy %t.$e.v.npy inf 0:0-78,0:209-211,1:0-19,1:150-211 || exit 1; \
// RUN: done
// RUN: for t in host haswell x86-64 nodot; do for f in fused decode; do \
// RUN:   cpu=; if [ $t = nodot ]; then cpu=--bf16-dot-products=false; elif [ $t != host ]; then cpu=--target-cpu=$t; fi; \
// RUN:   form=--form=$f; if [ $f = decode ]; then form="--form=decode --splits=3"; fi; \
// RUN:   for tiles in "" "--tile-q=48 --tile-k=64"; do \
// RUN:     attn-run %s --entry=window_causal_kv_len $form $cpu $tiles --input q=%t.q.npy --input k=%t.k.npy --input v=%t.v.npy --input kv_len=%t.len.npy --verify --reps=0 > /dev/null && echo ok || echo FAIL dense $t $f $tiles; \
// RUN:   done; \
// RUN:   attn-run %s --entry=paged16 $form $cpu --input q=%t.pq.npy --input k=%t.pk.npy --input v=%t.pv.npy --input page_table=%t.pt.npy --input kv_len=%t.plen.npy --verify --reps=0 > /dev/null && echo ok || echo FAIL paged $t $f; \
// RUN:   for e in bf16 f16; do \
// RUN:     attn-run %s --entry=window_kv_len_$e $form $cpu --input q=%t.$e.q.npy --input k=%t.$e.k.npy --input v=%t.$e.v.npy --input kv_len=%t.llen.npy --verify --reps=0 > /dev/null && echo ok || echo FAIL $e $t $f; \
// RUN:   done; \
// RUN: done; done | sort | uniq -c | FileCheck %s --check-prefix=UNREAD --implicit-check-not=FAIL
// The rows overwritten are indeed never read: outputs without a NaN or an
// infinity (a row that read one would have them, in the reference too).
// RUN: attn-run %s --entry=window_causal_kv_len --input q=%t.q.npy --input k=%t.k.npy --input v=%t.v.npy --input kv_len=%t.len.npy --reps=0 --output=out=%t.o1.npy --output=lse=%t.l1.npy > /dev/null
// RUN: attn-run %s --entry=paged16 --input q=%t.pq.npy --input k=%t.pk.npy --input v=%t.pv.npy --input page_table=%t.pt.npy --input kv_len=%t.plen.npy --reps=0 --output=out=%t.o2.npy > /dev/null
// RUN: attn-run %s --entry=window_kv_len_bf16 --input q=%t.bf16.q.npy --input k=%t.bf16.k.npy --input v=%t.bf16.v.npy --input kv_len=%t.llen.npy --reps=0 --output=out=%t.o3.npy > /dev/null
// RUN: attn-run %s --entry=window_kv_len_f16 --input q=%t.f16.q.npy --input k=%t.f16.k.npy --input v=%t.f16.v.npy --input kv_len=%t.llen.npy --reps=0 --output=out=%t.o4.npy > /dev/null
// RUN: %python %S/Inputs/poison_rows.py --check-finite %t.o1.npy %t.l1.npy %t.o2.npy %t.o3.npy %t.o4.npy
//
// Every run prints ok, a failing one FAIL and its case; the counts of each
// line (sort | uniq -c) must be all ok.
// CHECK: {{^ *}}48 ok{{$}}
// LOGITS: {{^ *}}2 ok{{$}}
// DECODE: {{^ *}}6 ok{{$}}
// UNREAD: {{^ *}}40 ok{{$}}

// Nq = Nk = 203, top-left: the diagonal tiles of every query tile.
func.func @causal_top_left(%q: tensor<1x4x203x64xf32>, %k: tensor<1x2x203x64xf32>,
                           %v: tensor<1x2x203x64xf32>)
    -> (tensor<1x4x203x64xf32>, tensor<1x4x203xf32>) {
  %o, %lse = attn.attention q(%q : tensor<1x4x203x64xf32>)
      k(%k : tensor<1x2x203x64xf32>) v(%v : tensor<1x2x203x64xf32>)
      causal(top_left) -> tensor<1x4x203x64xf32>, tensor<1x4x203xf32>
  return %o, %lse : tensor<1x4x203x64xf32>, tensor<1x4x203xf32>
}

// Nq = 70 against Nk = 333, bottom-right: the diagonal starts at key 263.
func.func @causal_bottom_right(%q: tensor<2x2x70x32xf32>, %k: tensor<2x2x333x32xf32>,
                               %v: tensor<2x2x333x32xf32>)
    -> tensor<2x2x70x32xf32> {
  %o = attn.attention q(%q : tensor<2x2x70x32xf32>)
      k(%k : tensor<2x2x333x32xf32>) v(%v : tensor<2x2x333x32xf32>)
      causal(bottom_right) -> tensor<2x2x70x32xf32>
  return %o : tensor<2x2x70x32xf32>
}

// A window of 37 keys back and 9 ahead: two diagonals cut each band tile.
func.func @window(%q: tensor<1x2x290x64xf32>, %k: tensor<1x2x290x64xf32>,
                  %v: tensor<1x2x290x64xf32>)
    -> (tensor<1x2x290x64xf32>, tensor<1x2x290xf32>) {
  %o, %lse = attn.attention q(%q : tensor<1x2x290x64xf32>)
      k(%k : tensor<1x2x290x64xf32>) v(%v : tensor<1x2x290x64xf32>)
      window_left(37) window_right(9)
      -> tensor<1x2x290x64xf32>, tensor<1x2x290xf32>
  return %o, %lse : tensor<1x2x290x64xf32>, tensor<1x2x290xf32>
}

// Causal (bottom-right, on kv_len) with a window and per-batch lengths
// (random in [0, 250]): the diagonal moves with kv_len, and the rows of a
// short batch entry that sit before key 0 read nothing.
func.func @window_causal_kv_len(%q: tensor<2x2x120x32xf32>, %k: tensor<2x2x250x32xf32>,
                                %v: tensor<2x2x250x32xf32>, %len: tensor<2xi32>)
    -> (tensor<2x2x120x32xf32>, tensor<2x2x120xf32>) {
  %o, %lse = attn.attention q(%q : tensor<2x2x120x32xf32>)
      k(%k : tensor<2x2x250x32xf32>) v(%v : tensor<2x2x250x32xf32>)
      kv_len(%len : tensor<2xi32>) causal(bottom_right) window_left(50)
      -> tensor<2x2x120x32xf32>, tensor<2x2x120xf32>
  return %o, %lse : tensor<2x2x120x32xf32>, tensor<2x2x120xf32>
}

// bf16 and f16 (AVX-512 BF16 pairs on Zen 4, AMX where the host has it,
// f32 kernels elsewhere).
func.func @causal_bf16(%q: tensor<1x4x150x64xbf16>, %k: tensor<1x1x150x64xbf16>,
                       %v: tensor<1x1x150x64xbf16>) -> tensor<1x4x150x64xbf16> {
  %o = attn.attention q(%q : tensor<1x4x150x64xbf16>)
      k(%k : tensor<1x1x150x64xbf16>) v(%v : tensor<1x1x150x64xbf16>)
      causal(top_left) -> tensor<1x4x150x64xbf16>
  return %o : tensor<1x4x150x64xbf16>
}

func.func @causal_f16(%q: tensor<1x2x150x64xf16>, %k: tensor<1x2x150x64xf16>,
                      %v: tensor<1x2x150x64xf16>) -> tensor<1x2x150x64xf16> {
  %o = attn.attention q(%q : tensor<1x2x150x64xf16>)
      k(%k : tensor<1x2x150x64xf16>) v(%v : tensor<1x2x150x64xf16>)
      causal(top_left) -> tensor<1x2x150x64xf16>
  return %o : tensor<1x2x150x64xf16>
}

// Paged caches (random page tables and lengths): pages of 64 keys (a key
// tile within a page) and of 16 (P V per page of a tile, each page's k loops
// from its first key).
func.func @paged64(%q: tensor<2x4x100x32xf32>, %kp: tensor<16x2x64x32xf32>,
                   %vp: tensor<16x2x64x32xf32>, %pt: tensor<2x8xi32>,
                   %len: tensor<2xi32>) -> tensor<2x4x100x32xf32> {
  %o = attn.attention q(%q : tensor<2x4x100x32xf32>)
      k(%kp : tensor<16x2x64x32xf32>) v(%vp : tensor<16x2x64x32xf32>)
      page_table(%pt : tensor<2x8xi32>) kv_len(%len : tensor<2xi32>)
      causal(bottom_right) -> tensor<2x4x100x32xf32>
  return %o : tensor<2x4x100x32xf32>
}

func.func @paged16(%q: tensor<2x4x100x32xf32>, %kp: tensor<80x2x16x32xf32>,
                   %vp: tensor<80x2x16x32xf32>, %pt: tensor<2x32xi32>,
                   %len: tensor<2xi32>) -> tensor<2x4x100x32xf32> {
  %o = attn.attention q(%q : tensor<2x4x100x32xf32>)
      k(%kp : tensor<80x2x16x32xf32>) v(%vp : tensor<80x2x16x32xf32>)
      page_table(%pt : tensor<2x32xi32>) kv_len(%len : tensor<2xi32>)
      causal(bottom_right) window_left(70) -> tensor<2x4x100x32xf32>
  return %o : tensor<2x4x100x32xf32>
}

// A bias (scores through a logit generic) under a causal mask.
func.func @causal_bias(%q: tensor<1x2x130x32xf32>, %k: tensor<1x2x130x32xf32>,
                       %v: tensor<1x2x130x32xf32>, %bias: tensor<1x2x130x130xf32>)
    -> tensor<1x2x130x32xf32> {
  %o = attn.attention q(%q : tensor<1x2x130x32xf32>)
      k(%k : tensor<1x2x130x32xf32>) v(%v : tensor<1x2x130x32xf32>)
      bias(%bias : tensor<1x2x130x130xf32>) causal(top_left)
      -> tensor<1x2x130x32xf32>
  return %o : tensor<1x2x130x32xf32>
}

// The sigmoid normalization under a window.
func.func @window_sigmoid(%q: tensor<1x2x130x32xf32>, %k: tensor<1x2x130x32xf32>,
                          %v: tensor<1x2x130x32xf32>) -> tensor<1x2x130x32xf32> {
  %o = attn.attention q(%q : tensor<1x2x130x32xf32>)
      k(%k : tensor<1x2x130x32xf32>) v(%v : tensor<1x2x130x32xf32>)
      window_left(20) window_right(3) norm(sigmoid)
      -> tensor<1x2x130x32xf32>
  return %o : tensor<1x2x130x32xf32>
}

// bf16 and f16 under a window, a bottom-right diagonal and kv_len, for the
// runs over keys no row reads.
func.func @window_kv_len_bf16(%q: tensor<2x4x90x64xbf16>, %k: tensor<2x2x211x64xbf16>,
                              %v: tensor<2x2x211x64xbf16>, %len: tensor<2xi32>)
    -> tensor<2x4x90x64xbf16> {
  %o = attn.attention q(%q : tensor<2x4x90x64xbf16>)
      k(%k : tensor<2x2x211x64xbf16>) v(%v : tensor<2x2x211x64xbf16>)
      kv_len(%len : tensor<2xi32>) causal(bottom_right) window_left(41)
      -> tensor<2x4x90x64xbf16>
  return %o : tensor<2x4x90x64xbf16>
}

func.func @window_kv_len_f16(%q: tensor<2x4x90x64xf16>, %k: tensor<2x2x211x64xf16>,
                             %v: tensor<2x2x211x64xf16>, %len: tensor<2xi32>)
    -> tensor<2x4x90x64xf16> {
  %o = attn.attention q(%q : tensor<2x4x90x64xf16>)
      k(%k : tensor<2x2x211x64xf16>) v(%v : tensor<2x2x211x64xf16>)
      kv_len(%len : tensor<2xi32>) causal(bottom_right) window_left(41)
      -> tensor<2x4x90x64xf16>
  return %o : tensor<2x4x90x64xf16>
}
