// Unicode data frozen at the versions Hugging Face's Rust tokenizers was built with.
//
// The Rust library classifies characters with two old crates, not with the current
// Unicode tables that a JS engine ships:
// - `unicode_categories` 0.1.1 (Unicode 8.0 tables): BertNormalizer's control test
//   (Cc, Cf, and the private-use planes; not Cn), its accent stripping (Mn) and the
//   punctuation test of BertPreTokenizer and Punctuation (P*).
// - `unicode-normalization-alignments` 0.1.12 (Unicode 9.0): NFD/NFKD/NFC/NFKC and
//   the combining-mark test of the StripAccents normalizer.
// So a character added after Unicode 8 (e.g. U+0898, a Mn of Unicode 14) is not an
// accent for Rust, and a newer compatibility character (e.g. U+1FBF0) does not
// decompose there. The ranges below reproduce that: they were extracted from the
// crate's tables (categories) and from the Unicode 15 DerivedAge/UnicodeData files
// (characters newer than 9.0 that have a decomposition or a combining class).
// Format: comma-separated base-36 code points or ranges `start-end` (inclusive).

/** Cc and Cf of Unicode 8.0 (the private-use planes are tested separately). */
export const OLD_CONTROL_FORMAT =
  '0-v,3j-4f,4t,16o-16t,17g,1ct,1e7,4r2,6bv-6bz,6cq-6cu,6e8-6ec,6ee-6en,1edb,1ek9-1ekb,1hvh,2fts-2ftv,' + '2jxv-2jy2,jny9,jnz4-jo1r';

/** Mn of Unicode 8.0. */
export const OLD_NONSPACING_MARK =
  'lc-of,w3-w7,13l-14t,14v,14x-14y,150-151,153,174-17e,18r-19b,19s,1cm-1cs,1cv-1d0,1d3-1d4,1d6-1d9,1e9,' +
  '1f4-1fu,1ie-1io,1kb-1kj,1li-1ll,1ln-1lv,1lx-1lz,1m1-1m5,1nd-1nf,1r7-1s2,1tm,1to,1tt-1u0,1u5,1u9-1uf,' +
  '1uq-1ur,1vl,1x8,1xd-1xg,1xp,1ya-1yb,1z5-1z6,20s,20x-20y,213-214,217-219,21d,228-229,22d,22p-22q,24c,' +
  '24h-24l,24n-24o,24t,25e-25f,269,27w,27z,281-284,28d,28m,28y-28z,29u,2bk,2bx,2dc,2f2-2f4,2fa-2fc,' +
  '2fe-2fh,2fp-2fq,2g2-2g3,2gx,2ik,2in,2iu,2j0-2j1,2jm-2jn,2kh,2m9-2mc,2ml,2n6-2n7,2q2,2qa-2qc,2qe,2sx,' +
  '2t0-2t6,2tj-2tq,2wh,2wk-2wp,2wr-2ws,2x4-2x9,2zc-2zd,305,307,309,31t-326,328-32c,32e-32f,32l-32v,' +
  '32x-33w,346,371-374,376-37b,37d-37e,37h-37i,388-389,38e-38g,38x-390,39e,39h-39i,39p,3a5,3tp-3tr,' +
  '4k2-4k4,4ky-4l0,4lu-4lv,4mq-4mr,4ok-4ol,4on-4ot,4p2,4p5-4pf,4pp,4qz-4r1,4vd,4yo-4yq,4yv-4yw,4z6,' +
  '4zd-4zf,55j-55k,55n,57a,57c-57i,57k,57m,57p-57w,583-58c,58f,59s-5a5,5c0-5c3,5dg,5di-5dm,5do,5du,' +
  '5ez-5f7,5fk-5fl,5gi-5gl,5go-5gp,5gr-5gt,5ie,5ig-5ih,5il,5in-5ip,5kc-5kj,5km-5kn,5ow-5oy,5p0-5pc,' +
  '5pe-5pk,5pp,5pw,5q0-5q1,5vk-5x1,5x8-5xb,6hc-6ho,6ht,6hx-6i8,8vj-8vl,8zj,928-933,9ii-9il,9ll-9lm,wvj,' +
  'wvo-wvx,wwu-wwv,wz4-wz5,x6q,x6u,x6z,x7p-x7q,xc4,xcw-xdd,xeu-xf1,xfr-xg1,xhc-xhe,xir,xiu-xix,xj0,xk5,' +
  'xm1-xm6,xm9-xma,xmd-xme,xmr,xn0,xoc,xps,xpu-xpw,xpz-xq0,xq6-xq7,xq9,xrg-xrh,xrq,xyd,xyg,xyl,1dlq,' +
  '1e68-1e6n,1e74-1e7j,1eyl,1f4w,1f92-1f96,1gjl-1gjn,1gjp-1gjq,1gjw-1gjz,1gl4-1gl6,1glb,1gpx-1gpy,1hq9,' +
  '1hrs-1hs6,1htr-1htt,1hv7-1hva,1hvd-1hve,1hxc-1hxe,1hyf-1hyj,1hyl-1hys,1i0j,1i0w-1i0x,1i2e-1i2m,' +
  '1i2y-1i30,1i5r-1i5t,1i5w,1i5y-1i5z,1ian,1iar-1iay,1ibk-1ibl,1id8,1idc,1iee-1iek,1ieo-1ies,1inn-1ins,' +
  '1inu,1inz-1io0,1io2-1io3,1iuq-1iut,1iv0-1iv1,1iv3-1iv4,1ivw-1ivx,1iyb-1iyi,1iyl,1iyn-1iyo,1j1n,1j1p,' +
  '1j1s-1j1x,1j1z,1j4t-1j4v,1j4y-1j51,1j53-1j57,1zow-1zp0,1zqo-1zqu,20lr-20lu,2ftp-2ftq,2jxj-2jxl,' +
  '2jy3-2jya,2jyd-2jyj,2jze-2jzh,2k3m-2k3o,2lmo-2lo6,2lob-2lpo,2lpx,2lqc,2lqz-2lr3,2lr5-2lrj,2ok0-2ok6,' +
  'jo5c-jobz';

/** P (Pc Pd Pe Pf Pi Po Ps) of Unicode 8.0. */
export const OLD_PUNCTUATION =
  'x-z,11-16,18-1b,1m-1n,1r-1s,2j-2l,2n,3f,3h,4h,4n,4r,52-53,57,5b,ou,p3,122-127,13d-13e,14u,14w,14z,' +
  '152,16b-16c,16x-16y,170-171,17f,17i-17j,19m-19p,1ck,1ds-1e5,1kn-1kp,1m8-1mm,1ni,1us-1ut,1v4,25s,2r8,' +
  '2tr,2u2-2u3,2ys-2z6,2z8,30a-30d,32d,34g-34k,34p-34q,37u-37z,3cr,3ts-3u0,3y8,4fh-4fi,4gr-4gs,4iz-4j1,' +
  '4l1-4l2,4pg-4pi,4pk-4pm,4qo-4qy,4zo-4zp,55q-55r,59c-59i,59k-59p,5ei-5eo,5j0-5j3,5kr-5kv,5mm-5mn,' +
  '5og-5on,5oz,6c0-6cn,6cw-6df,6dh-6dt,6dv-6e6,6f1-6f2,6fh-6fi,6x4-6x7,6y1-6y2,7s8-7sl,7ut-7uu,7vq-7vz,' +
  '877-87s,89k-89n,8ak-8al,8vt-8vw,8vy-8vz,8z4,934-94e,94g-94y,9hd-9hf,9hk-9ht,9hw-9i7,9io,9j1,9ls,9ob,' +
  'wla-wlb,wst-wsv,wvn,wvy,wz6-wzb,x9w-x9z,xce-xcf,xdk-xdm,xdo,xf2-xf3,xgf,xj5-xjh,xjy-xjz,xng-xnj,' +
  'xr2-xr3,xrk-xrl,xyj,1e0u-1e0v,1e6o-1e6x,1e7k-1e8i,1e8k-1e8x,1e8z,1e94,1e96-1e97,1edd-1edf,1edh-1edm,' +
  '1edo-1edr,1ee2-1ee3,1ee7-1ee8,1eez-1ef1,1ef3,1efv,1efx,1efz-1eg5,1erk-1erm,1fa7,1fbk,1fn3,1g7r,1gdb,' +
  '1ge7,1gls-1gm0,1gn3,1gq8-1gqe,1gs9-1gsf,1gux-1gv0,1hs7-1hsd,1hvf-1hvg,1hvi-1hvl,1hz4-1hz7,1i0k-1i0l,' +
  '1i2t-1i2x,1i31,1i3f,1i3h-1i3j,1i60-1i65,1i95,1io6,1iv5-1ivr,1iyp-1iyr,1j5o-1j5q,1lrk-1lro,1zla-1zlb,' +
  '1zp1,1zqv-1zqz,1zr8,2ftr,2lqf-2lqj';

/** Characters newer than Unicode 9.0 that a current normalizer would decompose,
 *  compose or reorder: Rust's normalizer leaves them as they are. */
export const NEWER_THAN_UNICODE_9_NORMALIZATION =
  '1kt,1p3-1pb,1qi-1qr,1z2,2f0,2m3-2m4,2wq,4k5,5a7-5b1,5b4-5bf,5x2-5x6,a2n,x69-x6c,x7w,xux,1fpl,1fqc,' +
  '1g1t-1g1x,1g1z-1g34,1g36-1g3e,1h5w-1h5z,1h7t-1h7x,1hgr-1hgs,1hiy-1hj3,1hl2-1hlc,1hmq-1hmt,1htc,1id7,' +
  '1if7,1if9,1ifi,1ifl,1igo-1igw,1igy,1ih1,1ih3-1ih6,1ih8-1ihc,1ihe,1iht-1ihu,1ila,1jcp-1jcq,1jjs,' +
  '1jjx-1jjy,1jk3,1jog,1jqs,1jrb,1jtl,1jz4-1jzb,1kci,1kck-1kcl,1kev,1kqp-1kqq,1kre,1xr2-1xrj,206g-206i,' +
  '20og-20oh,2j12-2j21,2muo-2mwd,2mxb,2n1s-2n1y,2nce,2ne4-2ne7,2nsc-2nsf,2nzi-2nzj,2o6b,2o6e,2o6m-2o6n,' +
  '2o6t,2q98,2sc0-2sc9';

/** Combining marks (M) newer than Unicode 9.0: not marks for Rust's StripAccents. */
export const NEWER_THAN_UNICODE_9_MARK =
  '1kt,1p3-1pb,1qi-1qr,1z2,262-267,28l,2dg,2f0,2k3,2kg,2m3-2m4,2o1,2wq,2xa,4k5,4r3,5a7-5b1,5b4-5bf,5pz,' +
  '5x2-5x6,x7w,xdr,1h5w-1h5z,1h7t-1h7x,1hgr-1hgs,1hiy-1hj3,1hl2-1hlc,1hmq-1hmt,1htc,1htf-1htg,1hvm,' +
  '1hz9-1hza,1i32-1i33,1i69,1id7,1igo-1igw,1igy,1ih1,1ih3-1ih6,1ih8-1ihc,1ihe,1iht-1ihu,1ila,1jcc-1jcq,' +
  '1jjk-1jjp,1jjr-1jjs,1jjv-1jjy,1jk0,1jk2-1jk3,1jo1-1jo7,1joa-1jog,1jok,1jpd-1jpm,1jqr-1jqx,1jqz-1jr2,' +
  '1jrb,1jrl-1jrv,1jt6-1jtl,1jz4-1jzb,1kc1-1kc6,1kca,1kcc-1kcd,1kcf-1kcl,1kcn,1kei-1kem,1keo-1kep,' +
  '1ker-1kev,1koj-1kom,1kow-1kox,1koz,1kqc-1kqi,1kqm-1kqq,1kre,1ow0,1ow7-1owl,1xr2-1xrj,20jz,20lb-20lj,' +
  '20o4,20og-20oh,2jgg-2jhp,2jhs-2jie,2mxb,2n1s-2n1y,2nce,2ne4-2ne7,2nsc-2nsf,2nzi-2nzj,2o6b,2o6e,' +
  '2o6m-2o6n,2o6t';
