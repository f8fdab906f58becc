import torch, timm, interop, copy
torch.manual_seed(1); m=timm.create_model("repvgg_a0", pretrained=False)
for mod in m.modules():
    if isinstance(mod, torch.nn.BatchNorm2d): mod.reset_parameters()
m.eval(); torch.manual_seed(0); x=torch.randn(1,3,64,64)
with torch.no_grad():
    y=m(x); y64=copy.deepcopy(m).double()(x.double())
am=interop.wrap(m,[(1,3,64,64)])
with torch.no_grad(): a=am(x)
import onnxruntime as ort, io
buf=io.BytesIO(); torch.onnx.export(m,(x,),buf,dynamo=False); s=ort.InferenceSession(buf.getvalue())
o=torch.from_numpy(s.run(None,{s.get_inputs()[0].name:x.numpy()})[0])
sc=y64.abs().max()
f=lambda v: float((v.double()-y64).abs().max()/sc)
print(f"max|y64|={sc:.6g}; max-abs-err/max|exact|: Aidge {f(a):.3g}, onnxruntime {f(o):.3g}, torch float32 {f(y):.3g}")
