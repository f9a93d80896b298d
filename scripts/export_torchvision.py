#!/usr/bin/python3
"""Exports torchvision classification and segmentation models to ONNX with seeded random weights (no
downloads), a seeded random input and PyTorch's output, as references for the importer
(graph/) and its model tests (graph/tests/models_test.cpp).

For each model NAME it writes into --out:
  NAME.onnx         the model in eval mode (opset 13, 17 for the ViTs, unless --opset; static
                    shapes)
  NAME.input.npy    the input, float32 (batch, 3, size, size), uniform in [-1, 1)
  NAME.logits.npy   PyTorch's output for that input, float32 (batch, 1000); for a segmentation
                    model its `out` tensor (batch, classes, size, size)
  NAME.probs.npy    softmax of the logits over the classes (axis 1), float32, the logits' shape

Weights: torchvision's own initialisation under torch.manual_seed, then every
BatchNorm's weight, bias, running mean and running variance set to seeded random,
non-trivial values (so folding a BN into its conv is really exercised), then the last
linear layer scaled so the logits of this input have a standard deviation of about 2
(so the softmax is neither flat nor one-hot and the probability check means something).
GoogLeNet and Inception-v3 are built with aux_logits=False, transform_input=False (no auxiliary
heads, no input re-normalisation; Inception-v3 needs --size >= 75, 299 is its full size). vit_b_16 is torchvision's ViT-B/16 at --size (a multiple of 16);
vit_reduced the same modules with 2 layers, 4 heads, hidden 64, MLP 128 (the tests' size); their
LayerNorms get seeded random weights too and the zero-initialised head a random one.
convnext_tiny is torchvision's ConvNeXt-T; convnext_reduced its modules with two stages of 16
and 32 channels (2 and 1 blocks); their layer scales (1e-6 at initialisation) get seeded random
values in [0.25, 0.75).
fcn_resnet50 is torchvision's FCN-ResNet50 segmentation model (weights=None,
weights_backbone=None, aux_loss=False, 21 classes; the backbone's last two stages dilated), wrapped
to return its `out` tensor (the model returns a dict): its bilinear upsampling to the input size
exports as a Resize (linear, half_pixel) with constant sizes; its last conv is the one scaled.
MobileNetV3's Hardswish exports at opset 13 as a HardSigmoid
(alpha 1/6, beta 0.5) and a Mul; its squeeze-excitation gate as a HardSigmoid. Needs Debian's python3-torch and python3-torchvision; run with
/usr/bin/python3.

Usage: export_torchvision.py --model NAME|all [--size H] [--batch N] [--out DIR] [--seed S]
                             [--opset V]
Exit status 1 with "error: ..." for an unknown model or a bad option value; 2 (and a
message) if torch or torchvision cannot be imported, so tests can skip.
"""
import argparse
import os
import sys

MODELS = [
    "resnet18",
    "resnet50",
    "mobilenet_v2",
    "squeezenet1_1",
    "googlenet",
    "inception_v3",
    "densenet121",
    "shufflenet_v2_x1_0",
    "vgg16_bn",
    "mobilenet_v3_small",
    "mobilenet_v3_large",
    "vit_b_16",
    "vit_reduced",
    "convnext_tiny",
    "convnext_reduced",
    "swin_t",
    "swin_reduced",
    "fcn_resnet50",
]
# ViT's and ConvNeXt's nn.LayerNorm is one LayerNormalization node from opset 17 on (below: ReduceMean, Sub,
# Pow, Sqrt, Div); its models export at 17 unless --opset says otherwise.
DEFAULT_OPSET = {"vit_b_16": 17, "vit_reduced": 17, "convnext_tiny": 17, "convnext_reduced": 17,
                 "swin_t": 17, "swin_reduced": 17}
TORCH_MISSING = 2


def build(name, torchvision, size):
    m = torchvision.models
    if name == "vit_b_16":
        return m.vit_b_16(weights=None, image_size=size)
    if name == "vit_reduced":
        # ViT-B/16's modules with fewer and smaller layers (the model tests' size).
        return m.VisionTransformer(image_size=size, patch_size=16, num_layers=2, num_heads=4,
                                   hidden_dim=64, mlp_dim=128)
    if name == "convnext_reduced":
        # ConvNeXt-T's modules (patchify stem, 7x7 depthwise blocks with LayerNorm, GELU MLP and
        # layer scale, downsampling layers) with two stages of 16 and 32 channels.
        cfg = m.convnext.CNBlockConfig
        return m.convnext.ConvNeXt([cfg(16, 32, 2), cfg(32, None, 1)])
    if name == "swin_reduced":
        # Swin-T's modules (patch embedding, shifted-window attention with relative position
        # bias and the shift mask, patch merging) with embedding 32, two stages of 2 blocks,
        # 2 and 4 heads, 4x4 windows; no stochastic depth (an identity in eval anyway).
        return m.swin_transformer.SwinTransformer(patch_size=[4, 4], embed_dim=32, depths=[2, 2],
                                                  num_heads=[2, 4], window_size=[4, 4],
                                                  stochastic_depth_prob=0.0)
    if name == "fcn_resnet50":
        return m.segmentation.fcn_resnet50(weights=None, weights_backbone=None, aux_loss=False,
                                           num_classes=21)
    if name == "googlenet":
        return m.googlenet(weights=None, aux_logits=False, transform_input=False, init_weights=True)
    if name == "inception_v3":
        return m.inception_v3(weights=None, aux_logits=False, transform_input=False,
                              init_weights=True)
    return getattr(m, name)(weights=None)


def segmentation_out(model, torch):
    """A segmentation model returns a dict; this returns its 'out' tensor."""

    class Out(torch.nn.Module):
        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, x):
            return self.inner(x)["out"]

    return Out(model)


def randomise_batch_norms(model, torch, gen):
    for mod in model.modules():
        if isinstance(mod, torch.nn.modules.batchnorm._BatchNorm):
            c = mod.num_features
            with torch.no_grad():
                mod.weight.copy_(torch.rand(c, generator=gen) * 0.5 + 0.75)
                mod.bias.copy_(torch.randn(c, generator=gen) * 0.1)
                mod.running_mean.copy_(torch.randn(c, generator=gen) * 0.1)
                mod.running_var.copy_(torch.rand(c, generator=gen) * 0.5 + 0.75)


def randomise_layer_norms(model, torch, gen):
    """LayerNorm weights and biases away from 1 and 0, so that they are really exercised."""
    for mod in model.modules():
        if isinstance(mod, torch.nn.LayerNorm):
            n = mod.weight.shape[0]
            with torch.no_grad():
                mod.weight.copy_(torch.rand(n, generator=gen) * 0.5 + 0.75)
                mod.bias.copy_(torch.randn(n, generator=gen) * 0.1)


def randomise_layer_scales(model, torch, gen):
    """ConvNeXt's layer scale starts at 1e-6, which would make every block almost the
    identity: seeded values in [0.25, 0.75) instead."""
    for mod in model.modules():
        ls = getattr(mod, "layer_scale", None)
        if isinstance(ls, torch.nn.Parameter):
            with torch.no_grad():
                ls.copy_(torch.rand(ls.shape, generator=gen) * 0.5 + 0.25)


def last_linear(model, torch):
    last = None
    for mod in model.modules():
        if isinstance(mod, (torch.nn.Linear, torch.nn.Conv2d)):
            last = mod
    return last


def export(name, size, batch, out, seed, torch, torchvision, np, opset=13):
    torch.manual_seed(seed)
    model = build(name, torchvision, size)
    if name.startswith("fcn_"):
        model = segmentation_out(model, torch)
    gen = torch.Generator().manual_seed(seed + 1)
    randomise_batch_norms(model, torch, gen)
    randomise_layer_norms(model, torch, gen)
    randomise_layer_scales(model, torch, gen)
    last = last_linear(model, torch)
    if not bool(last.weight.detach().abs().sum()):
        # ViT's head starts at zero: random, so that the logits depend on the input.
        with torch.no_grad():
            last.weight.normal_(0.0, 0.02, generator=gen)
    model.eval()
    x = torch.rand(batch, 3, size, size, generator=gen) * 2 - 1
    with torch.no_grad():
        logits = model(x)
        # Scale the classifier (SqueezeNet's is a 1x1 conv followed by ReLU and a pool, both
        # positively homogeneous) so the logits have a standard deviation of about 2.
        std = float(logits.std())
        if std > 0:
            last = last_linear(model, torch)
            k = 2.0 / std
            last.weight.mul_(k)
            if last.bias is not None:
                last.bias.mul_(k)
        logits = model(x)
        probs = torch.softmax(logits, dim=1)
    path = os.path.join(out, name)
    torch.onnx.export(model, x, path + ".onnx", opset_version=opset, input_names=["input"],
                      output_names=["logits"], do_constant_folding=True)
    np.save(path + ".input.npy", x.numpy().astype(np.float32))
    np.save(path + ".logits.npy", logits.numpy().astype(np.float32))
    np.save(path + ".probs.npy", probs.numpy().astype(np.float32))
    print("%s: input (%d, 3, %d, %d), logits %s std %.3f, max prob %.4f -> %s.onnx" %
          (name, batch, size, size, "x".join(str(d) for d in logits.shape), float(logits.std()),
           float(probs.max()), path))


class Parser(argparse.ArgumentParser):
    """argparse's errors as "error: ..." with exit status 1 (2 means: no torch)."""

    def error(self, message):
        self.print_usage(sys.stderr)
        print("error: %s" % message, file=sys.stderr)
        sys.exit(1)


def main():
    ap = Parser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", required=True, help="one of %s, or all" % ", ".join(MODELS))
    ap.add_argument("--size", type=int, default=224, help="input height = width (default 224)")
    ap.add_argument("--batch", type=int, default=1, help="batch (default 1)")
    ap.add_argument("--out", default=".", help="output folder (created; default .)")
    ap.add_argument("--seed", type=int, default=0, help="seed of weights and input (default 0)")
    ap.add_argument("--opset", type=int, default=None,
                    help="ONNX opset (default 13, 17 for the ViTs; from 14 on Hardswish is one "
                         "HardSwish node, from 17 on LayerNorm one LayerNormalization node)")
    a = ap.parse_args()
    names = MODELS if a.model == "all" else [a.model]
    if any(n not in MODELS for n in names):
        print("error: --model %s: unknown model (one of %s, or all)" % (a.model, ", ".join(MODELS)),
              file=sys.stderr)
        return 1
    if a.size < 16 or a.size > 1024:
        print("error: --size %d: must be in [16, 1024]" % a.size, file=sys.stderr)
        return 1
    if a.batch < 1 or a.batch > 64:
        print("error: --batch %d: must be in [1, 64]" % a.batch, file=sys.stderr)
        return 1
    if a.opset is not None and (a.opset < 11 or a.opset > 17):
        print("error: --opset %d: must be in [11, 17]" % a.opset, file=sys.stderr)
        return 1
    try:
        import numpy as np
        import torch
        import torchvision
    except ImportError as e:
        print("torch / torchvision not importable (%s): install python3-torch and "
              "python3-torchvision (scripts/install_deps.sh --tests)" % e, file=sys.stderr)
        return TORCH_MISSING
    torch.set_num_threads(1)
    os.makedirs(a.out, exist_ok=True)
    for n in names:
        try:
            opset = a.opset if a.opset is not None else DEFAULT_OPSET.get(n, 13)
            export(n, a.size, a.batch, a.out, a.seed, torch, torchvision, np, opset)
        except Exception as e:  # an export failure (e.g. an unsupported size) names the model
            print("error: %s at size %d: %s" % (n, a.size, e), file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
