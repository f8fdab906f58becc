import sys, time, traceback, torch, timm, interop
name = sys.argv[1]
seed = int(sys.argv[2]) if len(sys.argv) > 2 else 0
torch.manual_seed(seed)
m = timm.create_model(name, pretrained=False)
import os
if os.environ.get("BNRESET"):
    for mod in m.modules():
        if isinstance(mod, torch.nn.BatchNorm2d): mod.reset_parameters()
    print("BN layers reset to gamma=1, beta=0 (torch default) after timm's init")
m = m.eval()
xseed = int(os.environ.get("XSEED", seed)); torch.manual_seed(xseed)
x = torch.randn(1, 3, 64, 64)
with torch.no_grad():
    y = m(x)
    y64 = m.double()(x.double()); m.float()
print(f"== {name} seed={seed} out shape {tuple(y.shape)} max|y|={y.abs().max():.6g} mean|y|={y.abs().mean():.6g}; torch f32 vs f64 max rel={((y.double()-y64).abs().max()/y64.abs().max()):.3g}")
t=time.time()
v = interop.verify(m, x, timeout=600)
print(f"-- verify ({time.time()-t:.0f}s):")
for k in ("outcome","category","attribution","phase","exporter","backward_checked","defect_id","defect_title","precision","summary"):
    print(f"   {k}: {getattr(v,k,'<no attr>')!r}")
print("   repr:", repr(v)[:3000])
t=time.time()
try:
    am = interop.wrap(m, [(1,3,64,64)])
    print(f"-- wrap ok ({time.time()-t:.0f}s), exporter={getattr(am,'exporter',None)}")
    xr = x.clone().requires_grad_(True)
    out = am(xr)
    print(f"-- first call returned; max|out-torch| = {(out.detach()-y).abs().max():.3g}, rel={((out.detach()-y).abs().max()/y.abs().max()):.3g}")
    vc = getattr(am, 'value_check', None)
    print("   value_check:", repr(vc)[:1500])
    try:
        out.sum().backward()
        print("-- backward returned; x.grad norm", xr.grad.norm())
    except Exception as e:
        print(f"-- backward raised {type(e).__module__}.{type(e).__name__}: {str(e)[:2000]}")
except Exception as e:
    print(f"-- wrap/forward raised {type(e).__module__}.{type(e).__name__}: {str(e)[:2000]}")
