// Every row of bytecode_ops.def has its op: each parses, prints and parses
// again, and compiles to its instruction with operands of the right banks.
// RUN: strata-opt %s --verify-roundtrip > /dev/null
// RUN: compile-module %s --emit=bytecode-listing | FileCheck %s

vm.module @rows {
  vm.import @check.expect_true(i32)
  vm.global.i32 @gi32
  vm.global.i64 @gi64
  vm.global.f32 @gf32
  vm.global.f64 @gf64
  vm.global.ref @gr : !vm.buffer
  vm.rodata @data "bytes"
  // CHECK-LABEL: function #0 @rows iIfFrr_i:
  vm.func @rows(%i: i32, %l: i64, %f: f32, %d: f64, %b: !vm.buffer, %list: !vm.list) -> i32 {
    // CHECK-NEXT: s{{[0-9]+}} = const.i32 -7
    %v1 = vm.const.i32 -7
    // CHECK-NEXT: s{{[0-9]+}} = const.i64 1099511627776
    %v2 = vm.const.i64 1099511627776
    // CHECK-NEXT: s{{[0-9]+}} = const.f32 1.5
    %v3 = vm.const.f32 1.5
    // CHECK-NEXT: s{{[0-9]+}} = const.f64 -0.25
    %v4 = vm.const.f64 -0.25
    // CHECK-NEXT: r{{[0-9]+}} = const.ref.zero
    %v5 = vm.const.ref.zero : !vm.list
    // CHECK-NEXT: r{{[0-9]+}} = const.ref.rodata @data
    %v6 = vm.const.ref.rodata @data : !vm.buffer
    // CHECK-NEXT: s{{[0-9]+}} = add.i32 s{{[0-9]+}}, s{{[0-9]+}}
    %v7 = vm.add.i32 %i, %i
    // CHECK-NEXT: s{{[0-9]+}} = sub.i32 s{{[0-9]+}}, s{{[0-9]+}}
    %v8 = vm.sub.i32 %i, %i
    // CHECK-NEXT: s{{[0-9]+}} = mul.i32 s{{[0-9]+}}, s{{[0-9]+}}
    %v9 = vm.mul.i32 %i, %i
    // CHECK-NEXT: s{{[0-9]+}} = div.i32.s s{{[0-9]+}}, s{{[0-9]+}}
    %v10 = vm.div.i32.s %i, %i
    // CHECK-NEXT: s{{[0-9]+}} = div.i32.u s{{[0-9]+}}, s{{[0-9]+}}
    %v11 = vm.div.i32.u %i, %i
    // CHECK-NEXT: s{{[0-9]+}} = rem.i32.s s{{[0-9]+}}, s{{[0-9]+}}
    %v12 = vm.rem.i32.s %i, %i
    // CHECK-NEXT: s{{[0-9]+}} = rem.i32.u s{{[0-9]+}}, s{{[0-9]+}}
    %v13 = vm.rem.i32.u %i, %i
    // CHECK-NEXT: s{{[0-9]+}} = and.i32 s{{[0-9]+}}, s{{[0-9]+}}
    %v14 = vm.and.i32 %i, %i
    // CHECK-NEXT: s{{[0-9]+}} = or.i32 s{{[0-9]+}}, s{{[0-9]+}}
    %v15 = vm.or.i32 %i, %i
    // CHECK-NEXT: s{{[0-9]+}} = xor.i32 s{{[0-9]+}}, s{{[0-9]+}}
    %v16 = vm.xor.i32 %i, %i
    // CHECK-NEXT: s{{[0-9]+}} = shl.i32 s{{[0-9]+}}, s{{[0-9]+}}
    %v17 = vm.shl.i32 %i, %i
    // CHECK-NEXT: s{{[0-9]+}} = shr.i32.s s{{[0-9]+}}, s{{[0-9]+}}
    %v18 = vm.shr.i32.s %i, %i
    // CHECK-NEXT: s{{[0-9]+}} = shr.i32.u s{{[0-9]+}}, s{{[0-9]+}}
    %v19 = vm.shr.i32.u %i, %i
    // CHECK-NEXT: s{{[0-9]+}} = not.i32 s{{[0-9]+}}
    %v20 = vm.not.i32 %i
    // CHECK-NEXT: s{{[0-9]+}} = add.i64 s{{[0-9]+}}, s{{[0-9]+}}
    %v21 = vm.add.i64 %l, %l
    // CHECK-NEXT: s{{[0-9]+}} = sub.i64 s{{[0-9]+}}, s{{[0-9]+}}
    %v22 = vm.sub.i64 %l, %l
    // CHECK-NEXT: s{{[0-9]+}} = mul.i64 s{{[0-9]+}}, s{{[0-9]+}}
    %v23 = vm.mul.i64 %l, %l
    // CHECK-NEXT: s{{[0-9]+}} = div.i64.s s{{[0-9]+}}, s{{[0-9]+}}
    %v24 = vm.div.i64.s %l, %l
    // CHECK-NEXT: s{{[0-9]+}} = div.i64.u s{{[0-9]+}}, s{{[0-9]+}}
    %v25 = vm.div.i64.u %l, %l
    // CHECK-NEXT: s{{[0-9]+}} = rem.i64.s s{{[0-9]+}}, s{{[0-9]+}}
    %v26 = vm.rem.i64.s %l, %l
    // CHECK-NEXT: s{{[0-9]+}} = rem.i64.u s{{[0-9]+}}, s{{[0-9]+}}
    %v27 = vm.rem.i64.u %l, %l
    // CHECK-NEXT: s{{[0-9]+}} = and.i64 s{{[0-9]+}}, s{{[0-9]+}}
    %v28 = vm.and.i64 %l, %l
    // CHECK-NEXT: s{{[0-9]+}} = or.i64 s{{[0-9]+}}, s{{[0-9]+}}
    %v29 = vm.or.i64 %l, %l
    // CHECK-NEXT: s{{[0-9]+}} = xor.i64 s{{[0-9]+}}, s{{[0-9]+}}
    %v30 = vm.xor.i64 %l, %l
    // CHECK-NEXT: s{{[0-9]+}} = shl.i64 s{{[0-9]+}}, s{{[0-9]+}}
    %v31 = vm.shl.i64 %l, %l
    // CHECK-NEXT: s{{[0-9]+}} = shr.i64.s s{{[0-9]+}}, s{{[0-9]+}}
    %v32 = vm.shr.i64.s %l, %l
    // CHECK-NEXT: s{{[0-9]+}} = shr.i64.u s{{[0-9]+}}, s{{[0-9]+}}
    %v33 = vm.shr.i64.u %l, %l
    // CHECK-NEXT: s{{[0-9]+}} = not.i64 s{{[0-9]+}}
    %v34 = vm.not.i64 %l
    // CHECK-NEXT: s{{[0-9]+}} = add.f32 s{{[0-9]+}}, s{{[0-9]+}}
    %v35 = vm.add.f32 %f, %f
    // CHECK-NEXT: s{{[0-9]+}} = sub.f32 s{{[0-9]+}}, s{{[0-9]+}}
    %v36 = vm.sub.f32 %f, %f
    // CHECK-NEXT: s{{[0-9]+}} = mul.f32 s{{[0-9]+}}, s{{[0-9]+}}
    %v37 = vm.mul.f32 %f, %f
    // CHECK-NEXT: s{{[0-9]+}} = div.f32 s{{[0-9]+}}, s{{[0-9]+}}
    %v38 = vm.div.f32 %f, %f
    // CHECK-NEXT: s{{[0-9]+}} = rem.f32 s{{[0-9]+}}, s{{[0-9]+}}
    %v39 = vm.rem.f32 %f, %f
    // CHECK-NEXT: s{{[0-9]+}} = min.f32 s{{[0-9]+}}, s{{[0-9]+}}
    %v40 = vm.min.f32 %f, %f
    // CHECK-NEXT: s{{[0-9]+}} = max.f32 s{{[0-9]+}}, s{{[0-9]+}}
    %v41 = vm.max.f32 %f, %f
    // CHECK-NEXT: s{{[0-9]+}} = neg.f32 s{{[0-9]+}}
    %v42 = vm.neg.f32 %f
    // CHECK-NEXT: s{{[0-9]+}} = abs.f32 s{{[0-9]+}}
    %v43 = vm.abs.f32 %f
    // CHECK-NEXT: s{{[0-9]+}} = sqrt.f32 s{{[0-9]+}}
    %v44 = vm.sqrt.f32 %f
    // CHECK-NEXT: s{{[0-9]+}} = floor.f32 s{{[0-9]+}}
    %v45 = vm.floor.f32 %f
    // CHECK-NEXT: s{{[0-9]+}} = ceil.f32 s{{[0-9]+}}
    %v46 = vm.ceil.f32 %f
    // CHECK-NEXT: s{{[0-9]+}} = add.f64 s{{[0-9]+}}, s{{[0-9]+}}
    %v47 = vm.add.f64 %d, %d
    // CHECK-NEXT: s{{[0-9]+}} = sub.f64 s{{[0-9]+}}, s{{[0-9]+}}
    %v48 = vm.sub.f64 %d, %d
    // CHECK-NEXT: s{{[0-9]+}} = mul.f64 s{{[0-9]+}}, s{{[0-9]+}}
    %v49 = vm.mul.f64 %d, %d
    // CHECK-NEXT: s{{[0-9]+}} = div.f64 s{{[0-9]+}}, s{{[0-9]+}}
    %v50 = vm.div.f64 %d, %d
    // CHECK-NEXT: s{{[0-9]+}} = rem.f64 s{{[0-9]+}}, s{{[0-9]+}}
    %v51 = vm.rem.f64 %d, %d
    // CHECK-NEXT: s{{[0-9]+}} = min.f64 s{{[0-9]+}}, s{{[0-9]+}}
    %v52 = vm.min.f64 %d, %d
    // CHECK-NEXT: s{{[0-9]+}} = max.f64 s{{[0-9]+}}, s{{[0-9]+}}
    %v53 = vm.max.f64 %d, %d
    // CHECK-NEXT: s{{[0-9]+}} = neg.f64 s{{[0-9]+}}
    %v54 = vm.neg.f64 %d
    // CHECK-NEXT: s{{[0-9]+}} = abs.f64 s{{[0-9]+}}
    %v55 = vm.abs.f64 %d
    // CHECK-NEXT: s{{[0-9]+}} = sqrt.f64 s{{[0-9]+}}
    %v56 = vm.sqrt.f64 %d
    // CHECK-NEXT: s{{[0-9]+}} = floor.f64 s{{[0-9]+}}
    %v57 = vm.floor.f64 %d
    // CHECK-NEXT: s{{[0-9]+}} = ceil.f64 s{{[0-9]+}}
    %v58 = vm.ceil.f64 %d
    // CHECK-NEXT: s{{[0-9]+}} = cmp.eq.i32 s{{[0-9]+}}, s{{[0-9]+}}
    %v59 = vm.cmp.eq.i32 %i, %i
    // CHECK-NEXT: s{{[0-9]+}} = cmp.ne.i32 s{{[0-9]+}}, s{{[0-9]+}}
    %v60 = vm.cmp.ne.i32 %i, %i
    // CHECK-NEXT: s{{[0-9]+}} = cmp.lt.i32.s s{{[0-9]+}}, s{{[0-9]+}}
    %v61 = vm.cmp.lt.i32.s %i, %i
    // CHECK-NEXT: s{{[0-9]+}} = cmp.le.i32.s s{{[0-9]+}}, s{{[0-9]+}}
    %v62 = vm.cmp.le.i32.s %i, %i
    // CHECK-NEXT: s{{[0-9]+}} = cmp.lt.i32.u s{{[0-9]+}}, s{{[0-9]+}}
    %v63 = vm.cmp.lt.i32.u %i, %i
    // CHECK-NEXT: s{{[0-9]+}} = cmp.le.i32.u s{{[0-9]+}}, s{{[0-9]+}}
    %v64 = vm.cmp.le.i32.u %i, %i
    // CHECK-NEXT: s{{[0-9]+}} = cmp.eq.i64 s{{[0-9]+}}, s{{[0-9]+}}
    %v65 = vm.cmp.eq.i64 %l, %l
    // CHECK-NEXT: s{{[0-9]+}} = cmp.ne.i64 s{{[0-9]+}}, s{{[0-9]+}}
    %v66 = vm.cmp.ne.i64 %l, %l
    // CHECK-NEXT: s{{[0-9]+}} = cmp.lt.i64.s s{{[0-9]+}}, s{{[0-9]+}}
    %v67 = vm.cmp.lt.i64.s %l, %l
    // CHECK-NEXT: s{{[0-9]+}} = cmp.le.i64.s s{{[0-9]+}}, s{{[0-9]+}}
    %v68 = vm.cmp.le.i64.s %l, %l
    // CHECK-NEXT: s{{[0-9]+}} = cmp.lt.i64.u s{{[0-9]+}}, s{{[0-9]+}}
    %v69 = vm.cmp.lt.i64.u %l, %l
    // CHECK-NEXT: s{{[0-9]+}} = cmp.le.i64.u s{{[0-9]+}}, s{{[0-9]+}}
    %v70 = vm.cmp.le.i64.u %l, %l
    // CHECK-NEXT: s{{[0-9]+}} = cmp.eq.f32 s{{[0-9]+}}, s{{[0-9]+}}
    %v71 = vm.cmp.eq.f32 %f, %f
    // CHECK-NEXT: s{{[0-9]+}} = cmp.ne.f32 s{{[0-9]+}}, s{{[0-9]+}}
    %v72 = vm.cmp.ne.f32 %f, %f
    // CHECK-NEXT: s{{[0-9]+}} = cmp.lt.f32 s{{[0-9]+}}, s{{[0-9]+}}
    %v73 = vm.cmp.lt.f32 %f, %f
    // CHECK-NEXT: s{{[0-9]+}} = cmp.le.f32 s{{[0-9]+}}, s{{[0-9]+}}
    %v74 = vm.cmp.le.f32 %f, %f
    // CHECK-NEXT: s{{[0-9]+}} = cmp.nan.f32 s{{[0-9]+}}
    %v75 = vm.cmp.nan.f32 %f
    // CHECK-NEXT: s{{[0-9]+}} = cmp.eq.f64 s{{[0-9]+}}, s{{[0-9]+}}
    %v76 = vm.cmp.eq.f64 %d, %d
    // CHECK-NEXT: s{{[0-9]+}} = cmp.ne.f64 s{{[0-9]+}}, s{{[0-9]+}}
    %v77 = vm.cmp.ne.f64 %d, %d
    // CHECK-NEXT: s{{[0-9]+}} = cmp.lt.f64 s{{[0-9]+}}, s{{[0-9]+}}
    %v78 = vm.cmp.lt.f64 %d, %d
    // CHECK-NEXT: s{{[0-9]+}} = cmp.le.f64 s{{[0-9]+}}, s{{[0-9]+}}
    %v79 = vm.cmp.le.f64 %d, %d
    // CHECK-NEXT: s{{[0-9]+}} = cmp.nan.f64 s{{[0-9]+}}
    %v80 = vm.cmp.nan.f64 %d
    // CHECK-NEXT: s{{[0-9]+}} = cmp.eq.ref r{{[0-9]+}}, r{{[0-9]+}}
    %v81 = vm.cmp.eq.ref %b, %b : !vm.buffer
    // CHECK-NEXT: s{{[0-9]+}} = cmp.nz.ref r{{[0-9]+}}
    %v82 = vm.cmp.nz.ref %list : !vm.list
    // CHECK-NEXT: s{{[0-9]+}} = trunc.i64.i32 s{{[0-9]+}}
    %v83 = vm.trunc.i64.i32 %l
    // CHECK-NEXT: s{{[0-9]+}} = ext.i32.i64.s s{{[0-9]+}}
    %v84 = vm.ext.i32.i64.s %i
    // CHECK-NEXT: s{{[0-9]+}} = ext.i32.i64.u s{{[0-9]+}}
    %v85 = vm.ext.i32.i64.u %i
    // CHECK-NEXT: s{{[0-9]+}} = trunc.i32.i8 s{{[0-9]+}}
    %v86 = vm.trunc.i32.i8 %i
    // CHECK-NEXT: s{{[0-9]+}} = trunc.i32.i16 s{{[0-9]+}}
    %v87 = vm.trunc.i32.i16 %i
    // CHECK-NEXT: s{{[0-9]+}} = ext.i8.i32.s s{{[0-9]+}}
    %v88 = vm.ext.i8.i32.s %i
    // CHECK-NEXT: s{{[0-9]+}} = ext.i16.i32.s s{{[0-9]+}}
    %v89 = vm.ext.i16.i32.s %i
    // CHECK-NEXT: s{{[0-9]+}} = cast.si32.f32 s{{[0-9]+}}
    %v90 = vm.cast.si32.f32 %i
    // CHECK-NEXT: s{{[0-9]+}} = cast.ui32.f32 s{{[0-9]+}}
    %v91 = vm.cast.ui32.f32 %i
    // CHECK-NEXT: s{{[0-9]+}} = cast.si64.f32 s{{[0-9]+}}
    %v92 = vm.cast.si64.f32 %l
    // CHECK-NEXT: s{{[0-9]+}} = cast.si32.f64 s{{[0-9]+}}
    %v93 = vm.cast.si32.f64 %i
    // CHECK-NEXT: s{{[0-9]+}} = cast.si64.f64 s{{[0-9]+}}
    %v94 = vm.cast.si64.f64 %l
    // CHECK-NEXT: s{{[0-9]+}} = cast.ui64.f64 s{{[0-9]+}}
    %v95 = vm.cast.ui64.f64 %l
    // CHECK-NEXT: s{{[0-9]+}} = cast.f32.si32 s{{[0-9]+}}
    %v96 = vm.cast.f32.si32 %f
    // CHECK-NEXT: s{{[0-9]+}} = cast.f32.ui32 s{{[0-9]+}}
    %v97 = vm.cast.f32.ui32 %f
    // CHECK-NEXT: s{{[0-9]+}} = cast.f32.si64 s{{[0-9]+}}
    %v98 = vm.cast.f32.si64 %f
    // CHECK-NEXT: s{{[0-9]+}} = cast.f64.si32 s{{[0-9]+}}
    %v99 = vm.cast.f64.si32 %d
    // CHECK-NEXT: s{{[0-9]+}} = cast.f64.si64 s{{[0-9]+}}
    %v100 = vm.cast.f64.si64 %d
    // CHECK-NEXT: s{{[0-9]+}} = cast.f64.ui64 s{{[0-9]+}}
    %v101 = vm.cast.f64.ui64 %d
    // CHECK-NEXT: s{{[0-9]+}} = ext.f32.f64 s{{[0-9]+}}
    %v102 = vm.ext.f32.f64 %f
    // CHECK-NEXT: s{{[0-9]+}} = trunc.f64.f32 s{{[0-9]+}}
    %v103 = vm.trunc.f64.f32 %d
    // CHECK-NEXT: s{{[0-9]+}} = bitcast.i32.f32 s{{[0-9]+}}
    %v104 = vm.bitcast.i32.f32 %i
    // CHECK-NEXT: s{{[0-9]+}} = bitcast.f32.i32 s{{[0-9]+}}
    %v105 = vm.bitcast.f32.i32 %f
    // CHECK-NEXT: s{{[0-9]+}} = bitcast.i64.f64 s{{[0-9]+}}
    %v106 = vm.bitcast.i64.f64 %l
    // CHECK-NEXT: s{{[0-9]+}} = bitcast.f64.i64 s{{[0-9]+}}
    %v107 = vm.bitcast.f64.i64 %d
    // CHECK-NEXT: s{{[0-9]+}} = select.i32 s{{[0-9]+}}, s{{[0-9]+}}, s{{[0-9]+}}
    %v108 = vm.select.i32 %i, %i, %i
    // CHECK-NEXT: s{{[0-9]+}} = select.i64 s{{[0-9]+}}, s{{[0-9]+}}, s{{[0-9]+}}
    %v109 = vm.select.i64 %i, %l, %l
    // CHECK-NEXT: s{{[0-9]+}} = select.f32 s{{[0-9]+}}, s{{[0-9]+}}, s{{[0-9]+}}
    %v110 = vm.select.f32 %i, %f, %f
    // CHECK-NEXT: s{{[0-9]+}} = select.f64 s{{[0-9]+}}, s{{[0-9]+}}, s{{[0-9]+}}
    %v111 = vm.select.f64 %i, %d, %d
    // CHECK-NEXT: r{{[0-9]+}} = select.ref s{{[0-9]+}}, r{{[0-9]+}}, r{{[0-9]+}}
    %v112 = vm.select.ref %i, %b, %b : !vm.buffer
    // CHECK-NEXT: s{{[0-9]+}} = global.load.i32 global[0]
    %v113 = vm.global.load.i32 @gi32 : i32
    // CHECK-NEXT: s{{[0-9]+}} = global.load.i64 global[8]
    %v114 = vm.global.load.i64 @gi64 : i64
    // CHECK-NEXT: s{{[0-9]+}} = global.load.f32 global[16]
    %v115 = vm.global.load.f32 @gf32 : f32
    // CHECK-NEXT: s{{[0-9]+}} = global.load.f64 global[24]
    %v116 = vm.global.load.f64 @gf64 : f64
    // CHECK-NEXT: r{{[0-9]+}} = global.load.ref ref_global[0]
    %v117 = vm.global.load.ref @gr : !vm.buffer
    // CHECK-NEXT: global.store.i32 s{{[0-9]+}}, global[0]
    vm.global.store.i32 %i, @gi32 : i32
    // CHECK-NEXT: global.store.i64 s{{[0-9]+}}, global[8]
    vm.global.store.i64 %l, @gi64 : i64
    // CHECK-NEXT: global.store.f32 s{{[0-9]+}}, global[16]
    vm.global.store.f32 %f, @gf32 : f32
    // CHECK-NEXT: global.store.f64 s{{[0-9]+}}, global[24]
    vm.global.store.f64 %d, @gf64 : f64
    // CHECK-NEXT: global.store.ref r{{[0-9]+}}, ref_global[0]
    vm.global.store.ref %b, @gr : !vm.buffer
    // CHECK-NEXT: r{{[0-9]+}} = buffer.alloc s{{[0-9]+}}
    %v118 = vm.buffer.alloc %l
    // CHECK-NEXT: s{{[0-9]+}} = buffer.length r{{[0-9]+}}
    %v119 = vm.buffer.length %b
    // CHECK-NEXT: buffer.copy r{{[0-9]+}}, s{{[0-9]+}}, r{{[0-9]+}}, s{{[0-9]+}}, s{{[0-9]+}}
    vm.buffer.copy %b[%l], %b[%l], %l
    // CHECK-NEXT: buffer.fill.i8 r{{[0-9]+}}, s{{[0-9]+}}, s{{[0-9]+}}, s{{[0-9]+}}
    vm.buffer.fill.i8 %b[%l], %l, %i
    // CHECK-NEXT: s{{[0-9]+}} = buffer.load.i8.s r{{[0-9]+}}, s{{[0-9]+}}
    %v120 = vm.buffer.load.i8.s %b[%l] : i32
    // CHECK-NEXT: s{{[0-9]+}} = buffer.load.i8.u r{{[0-9]+}}, s{{[0-9]+}}
    %v121 = vm.buffer.load.i8.u %b[%l] : i32
    // CHECK-NEXT: s{{[0-9]+}} = buffer.load.i16.s r{{[0-9]+}}, s{{[0-9]+}}
    %v122 = vm.buffer.load.i16.s %b[%l] : i32
    // CHECK-NEXT: s{{[0-9]+}} = buffer.load.i16.u r{{[0-9]+}}, s{{[0-9]+}}
    %v123 = vm.buffer.load.i16.u %b[%l] : i32
    // CHECK-NEXT: s{{[0-9]+}} = buffer.load.i32 r{{[0-9]+}}, s{{[0-9]+}}
    %v124 = vm.buffer.load.i32 %b[%l] : i32
    // CHECK-NEXT: s{{[0-9]+}} = buffer.load.i64 r{{[0-9]+}}, s{{[0-9]+}}
    %v125 = vm.buffer.load.i64 %b[%l] : i64
    // CHECK-NEXT: s{{[0-9]+}} = buffer.load.f32 r{{[0-9]+}}, s{{[0-9]+}}
    %v126 = vm.buffer.load.f32 %b[%l] : f32
    // CHECK-NEXT: s{{[0-9]+}} = buffer.load.f64 r{{[0-9]+}}, s{{[0-9]+}}
    %v127 = vm.buffer.load.f64 %b[%l] : f64
    // CHECK-NEXT: buffer.store.i8 r{{[0-9]+}}, s{{[0-9]+}}, s{{[0-9]+}}
    vm.buffer.store.i8 %b[%l], %i : i32
    // CHECK-NEXT: buffer.store.i16 r{{[0-9]+}}, s{{[0-9]+}}, s{{[0-9]+}}
    vm.buffer.store.i16 %b[%l], %i : i32
    // CHECK-NEXT: buffer.store.i32 r{{[0-9]+}}, s{{[0-9]+}}, s{{[0-9]+}}
    vm.buffer.store.i32 %b[%l], %i : i32
    // CHECK-NEXT: buffer.store.i64 r{{[0-9]+}}, s{{[0-9]+}}, s{{[0-9]+}}
    vm.buffer.store.i64 %b[%l], %l : i64
    // CHECK-NEXT: buffer.store.f32 r{{[0-9]+}}, s{{[0-9]+}}, s{{[0-9]+}}
    vm.buffer.store.f32 %b[%l], %f : f32
    // CHECK-NEXT: buffer.store.f64 r{{[0-9]+}}, s{{[0-9]+}}, s{{[0-9]+}}
    vm.buffer.store.f64 %b[%l], %d : f64
    // CHECK-NEXT: r{{[0-9]+}} = list.alloc s{{[0-9]+}}
    %v128 = vm.list.alloc %i
    // CHECK-NEXT: s{{[0-9]+}} = list.size r{{[0-9]+}}
    %v129 = vm.list.size %list
    // CHECK-NEXT: list.resize r{{[0-9]+}}, s{{[0-9]+}}
    vm.list.resize %list, %i
    // CHECK-NEXT: s{{[0-9]+}} = list.get.i32 r{{[0-9]+}}, s{{[0-9]+}}
    %v130 = vm.list.get.i32 %list[%i] : i32
    // CHECK-NEXT: s{{[0-9]+}} = list.get.i64 r{{[0-9]+}}, s{{[0-9]+}}
    %v131 = vm.list.get.i64 %list[%i] : i64
    // CHECK-NEXT: s{{[0-9]+}} = list.get.f32 r{{[0-9]+}}, s{{[0-9]+}}
    %v132 = vm.list.get.f32 %list[%i] : f32
    // CHECK-NEXT: s{{[0-9]+}} = list.get.f64 r{{[0-9]+}}, s{{[0-9]+}}
    %v133 = vm.list.get.f64 %list[%i] : f64
    // CHECK-NEXT: r{{[0-9]+}} = list.get.ref r{{[0-9]+}}, s{{[0-9]+}}
    %v134 = vm.list.get.ref %list[%i] : !vm.buffer
    // CHECK-NEXT: list.set.i32 r{{[0-9]+}}, s{{[0-9]+}}, s{{[0-9]+}}
    vm.list.set.i32 %list[%i], %i : i32
    // CHECK-NEXT: list.set.i64 r{{[0-9]+}}, s{{[0-9]+}}, s{{[0-9]+}}
    vm.list.set.i64 %list[%i], %l : i64
    // CHECK-NEXT: list.set.f32 r{{[0-9]+}}, s{{[0-9]+}}, s{{[0-9]+}}
    vm.list.set.f32 %list[%i], %f : f32
    // CHECK-NEXT: list.set.f64 r{{[0-9]+}}, s{{[0-9]+}}, s{{[0-9]+}}
    vm.list.set.f64 %list[%i], %d : f64
    // CHECK-NEXT: list.set.ref r{{[0-9]+}}, s{{[0-9]+}}, r{{[0-9]+}}
    vm.list.set.ref %list[%i], %b : !vm.buffer
    // Keeps every result alive through canonicalization.
    // CHECK-NEXT: call @sink, ({{.*}})
    vm.call @sink(
        %v1, %v2, %v3, %v4, %v5, %v6, %v7, %v8, %v9, %v10, %v11, %v12, %v13, %v14,
        %v15, %v16, %v17, %v18, %v19, %v20, %v21, %v22, %v23, %v24, %v25, %v26,
        %v27, %v28, %v29, %v30, %v31, %v32, %v33, %v34, %v35, %v36, %v37, %v38,
        %v39, %v40, %v41, %v42, %v43, %v44, %v45, %v46, %v47, %v48, %v49, %v50,
        %v51, %v52, %v53, %v54, %v55, %v56, %v57, %v58, %v59, %v60, %v61, %v62,
        %v63, %v64, %v65, %v66, %v67, %v68, %v69, %v70, %v71, %v72, %v73, %v74,
        %v75, %v76, %v77, %v78, %v79, %v80, %v81, %v82, %v83, %v84, %v85, %v86,
        %v87, %v88, %v89, %v90, %v91, %v92, %v93, %v94, %v95, %v96, %v97, %v98,
        %v99, %v100, %v101, %v102, %v103, %v104, %v105, %v106, %v107, %v108, %v109,
        %v110, %v111, %v112, %v113, %v114, %v115, %v116, %v117, %v118, %v119, %v120,
        %v121, %v122, %v123, %v124, %v125, %v126, %v127, %v128, %v129, %v130, %v131,
        %v132, %v133, %v134
    )
        : (
            i32, i64, f32, f64, !vm.list, !vm.buffer, i32, i32, i32, i32, i32, i32, i32,
            i32, i32, i32, i32, i32, i32, i32, i64, i64, i64, i64, i64, i64, i64, i64,
            i64, i64, i64, i64, i64, i64, f32, f32, f32, f32, f32, f32, f32, f32, f32,
            f32, f32, f32, f64, f64, f64, f64, f64, f64, f64, f64, f64, f64, f64, f64,
            i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32,
            i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i64, i64, i32, i32, i32,
            i32, f32, f32, f32, f64, f64, f64, i32, i32, i64, i32, i64, i64, f64, f32,
            f32, i32, f64, i64, i32, i64, f32, f64, !vm.buffer, i32, i64, f32, f64,
            !vm.buffer, !vm.buffer, i64, i32, i32, i32, i32, i32, i64, f32, f64,
            !vm.list, i32, i32, i64, f32, f64, !vm.buffer
        ) -> ()
    // CHECK-NEXT: call.import @check.expect_true, (s{{[0-9]+}})
    vm.call.import @check.expect_true(%i) : (i32) -> ()
    // CHECK-NEXT: cond_fail s{{[0-9]+}}, "cond_fail"
    vm.cond_fail %i, "cond_fail"
    // CHECK-NEXT: check.eq.i64 s{{[0-9]+}}, s{{[0-9]+}}, "check.eq.i64"
    vm.check.eq.i64 %l, %l, "check.eq.i64"
    // CHECK-NEXT: check.le.i64.s s{{[0-9]+}}, s{{[0-9]+}}, "check.le.i64.s"
    vm.check.le.i64.s %l, %l, "check.le.i64.s"
    // CHECK-NEXT: br ^{{[0-9a-f]+}}, []
    vm.br ^cond
  ^fail:
    // CHECK-NEXT: fail "fail"
    vm.fail "fail"
  ^cond:
    // CHECK-NEXT: cond_br s{{[0-9]+}}, ^{{[0-9a-f]+}}, ^{{[0-9a-f]+}}
    vm.cond_br %i, ^fail, ^lt32
  ^lt32:
    // CHECK-NEXT: br.lt.i32.s s{{[0-9]+}}, s{{[0-9]+}}, ^{{[0-9a-f]+}}
    vm.cmp_br.lt.i32.s %i, %i, ^fail, ^le32
  ^le32:
    // CHECK-NEXT: br.le.i32.s s{{[0-9]+}}, s{{[0-9]+}}, ^{{[0-9a-f]+}}
    vm.cmp_br.le.i32.s %i, %i, ^fail, ^lt64
  ^lt64:
    // CHECK-NEXT: br.lt.i64.s s{{[0-9]+}}, s{{[0-9]+}}, ^{{[0-9a-f]+}}
    vm.cmp_br.lt.i64.s %l, %l, ^fail, ^le64
  ^le64:
    // CHECK-NEXT: br.le.i64.s s{{[0-9]+}}, s{{[0-9]+}}, ^{{[0-9a-f]+}}
    vm.cmp_br.le.i64.s %l, %l, ^fail, ^done
  ^done:
    // CHECK-NEXT: return (s{{[0-9]+}})
    vm.return %i : i32
  }
  vm.func @sink(
      %a0: i32, %a1: i64, %a2: f32, %a3: f64, %a4: !vm.list, %a5: !vm.buffer,
      %a6: i32, %a7: i32, %a8: i32, %a9: i32, %a10: i32, %a11: i32, %a12: i32,
      %a13: i32, %a14: i32, %a15: i32, %a16: i32, %a17: i32, %a18: i32,
      %a19: i32, %a20: i64, %a21: i64, %a22: i64, %a23: i64, %a24: i64,
      %a25: i64, %a26: i64, %a27: i64, %a28: i64, %a29: i64, %a30: i64,
      %a31: i64, %a32: i64, %a33: i64, %a34: f32, %a35: f32, %a36: f32,
      %a37: f32, %a38: f32, %a39: f32, %a40: f32, %a41: f32, %a42: f32,
      %a43: f32, %a44: f32, %a45: f32, %a46: f64, %a47: f64, %a48: f64,
      %a49: f64, %a50: f64, %a51: f64, %a52: f64, %a53: f64, %a54: f64,
      %a55: f64, %a56: f64, %a57: f64, %a58: i32, %a59: i32, %a60: i32,
      %a61: i32, %a62: i32, %a63: i32, %a64: i32, %a65: i32, %a66: i32,
      %a67: i32, %a68: i32, %a69: i32, %a70: i32, %a71: i32, %a72: i32,
      %a73: i32, %a74: i32, %a75: i32, %a76: i32, %a77: i32, %a78: i32,
      %a79: i32, %a80: i32, %a81: i32, %a82: i32, %a83: i64, %a84: i64,
      %a85: i32, %a86: i32, %a87: i32, %a88: i32, %a89: f32, %a90: f32,
      %a91: f32, %a92: f64, %a93: f64, %a94: f64, %a95: i32, %a96: i32,
      %a97: i64, %a98: i32, %a99: i64, %a100: i64, %a101: f64, %a102: f32,
      %a103: f32, %a104: i32, %a105: f64, %a106: i64, %a107: i32, %a108: i64,
      %a109: f32, %a110: f64, %a111: !vm.buffer, %a112: i32, %a113: i64,
      %a114: f32, %a115: f64, %a116: !vm.buffer, %a117: !vm.buffer, %a118: i64,
      %a119: i32, %a120: i32, %a121: i32, %a122: i32, %a123: i32, %a124: i64,
      %a125: f32, %a126: f64, %a127: !vm.list, %a128: i32, %a129: i32,
      %a130: i64, %a131: f32, %a132: f64, %a133: !vm.buffer
  ) {
    vm.return
  }
}
