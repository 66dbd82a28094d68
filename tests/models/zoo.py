"""Real models with seeded random weights, for the model suite and the importers.

    strata-import-torch tests/models/zoo.py:resnet18 -o resnet18.mlir
    from zoo import FAMILIES; model = FAMILIES["bert"].build(16)

No weights can be downloaded here, so every model is built from its library's
own definition (torchvision, transformers) with weights drawn after
torch.manual_seed(SEED): the same model every time. The transformers models
are wrapped in a module that takes tensors and returns last_hidden_state alone.

Each family has a build(size) and an inputs(batch, size, seed); size is the
image side for the vision models, the sequence length for the text models.
The factories at the end (resnet18(), bert(), ...) return (model, example
arguments) at batch 1 and the first size, the form strata-import-torch takes.
"""
import torch
import torchvision

SEED = 0


class Family:
    """A model family: how to build it at a size and make its inputs."""

    def __init__(self, name, build, inputs, sizes, transformer, describe):
        self.name = name
        self.build = build          # size -> nn.Module, eval mode, seeded weights
        self.inputs = inputs        # (batch, size, seed) -> tuple of tensors
        self.sizes = sizes          # the sizes the suite exports: the first, and a second
        self.transformer = transformer
        self.describe = describe    # size -> a short text for the check lines


def _seeded(make):
    torch.manual_seed(SEED)
    model = make()
    return model.eval()


def images(batch, side, seed):
    generator = torch.Generator().manual_seed(seed)
    return (torch.randn(batch, 3, side, side, generator=generator),)


def token_inputs(vocab, left_padded=False):
    """(input_ids, attention_mask), int64: row 0 unpadded, later rows padded.

    Padding goes at the end, or at the start with left_padded (as for
    generation with a decoder).
    """
    def make(batch, seq, seed):
        generator = torch.Generator().manual_seed(seed)
        ids = torch.randint(0, vocab, (batch, seq), generator=generator)
        mask = torch.ones(batch, seq, dtype=torch.int64)
        for row in range(1, batch):
            length = int(torch.randint(seq // 2, seq + 1, (1,), generator=generator))
            if left_padded:
                mask[row, :seq - length] = 0
            else:
                mask[row, length:] = 0
        return ids, mask
    return make


class LastHiddenState(torch.nn.Module):
    """A transformers model as f(input_ids, attention_mask) -> last_hidden_state.

    positions_from_mask: position ids counted over the unmasked tokens, as
    transformers' generate() does for a left-padded batch (a cumsum of the mask).
    """

    def __init__(self, model, positions_from_mask=False, **options):
        super().__init__()
        self.model = model
        self.positions_from_mask = positions_from_mask
        self.options = options  # more keyword arguments for the model, like use_cache=False

    def forward(self, input_ids, attention_mask):
        options = dict(self.options)
        if self.positions_from_mask:
            position_ids = attention_mask.cumsum(-1) - 1
            options["position_ids"] = position_ids.masked_fill(attention_mask == 0, 1)
        return self.model(input_ids=input_ids, attention_mask=attention_mask,
                          **options).last_hidden_state


def calibrated(model, side):
    """model with batch-norm statistics measured on seeded random images.

    Fresh batch norms hold mean 0 and variance 1, which leave MobileNetV2's
    activations vanishing (its outputs come out near 1e-9, below any useful
    tolerance); statistics measured as in training keep every layer's
    activations near unit scale, as in a trained network.
    """
    for m in model.modules():
        if isinstance(m, torch.nn.modules.batchnorm._BatchNorm):
            m.reset_running_stats()
            m.momentum = None  # a plain average over the batches below
    generator = torch.Generator().manual_seed(SEED)
    model.train()
    with torch.no_grad():
        for _ in range(2):
            model(torch.randn(8, 3, side, side, generator=generator))
    return model.eval()


def build_resnet18(side):
    return calibrated(_seeded(lambda: torchvision.models.resnet18(weights=None)), side)


def build_mobilenet_v2(side):
    return calibrated(_seeded(lambda: torchvision.models.mobilenet_v2(weights=None)), side)


BERT_VOCAB = 30522


def build_bert(seq):
    """A BERT encoder the shape of all-MiniLM-L6-v2: 6 layers, hidden 384, 12 heads."""
    from transformers import BertConfig, BertModel
    config = BertConfig(vocab_size=BERT_VOCAB, hidden_size=384, num_hidden_layers=6,
                        num_attention_heads=12, intermediate_size=1536,
                        max_position_embeddings=512)
    return _seeded(lambda: LastHiddenState(BertModel(config, add_pooling_layer=False)))


GPT2_VOCAB = 50257


def build_gpt2(seq):
    """GPT-2's architecture, small: 2 layers, n_embd 256, 4 heads, the real vocabulary.

    Left-padded inputs with position ids from the mask, as in generation.
    """
    from transformers import GPT2Config, GPT2Model
    config = GPT2Config(vocab_size=GPT2_VOCAB, n_positions=256, n_embd=256, n_layer=2,
                        n_head=4)
    return _seeded(lambda: LastHiddenState(GPT2Model(config), positions_from_mask=True,
                                           use_cache=False))


def build_vit(side):
    """torchvision's VisionTransformer, small: 8x8 patches, 2 layers, hidden 128, 4 heads.

    torchvision starts the classifier head at zero (every output 0 whatever the
    image), so it gets random weights too.
    """
    def make():
        model = torchvision.models.VisionTransformer(
            image_size=side, patch_size=8, num_layers=2, num_heads=4, hidden_dim=128,
            mlp_dim=256, num_classes=10)
        torch.nn.init.normal_(model.heads.head.weight, std=0.1)
        torch.nn.init.normal_(model.heads.head.bias, std=0.1)
        return model
    return _seeded(make)


def _image(side):
    return "3x%dx%d" % (side, side)


def _vit_text(side):
    return "3x%dx%d, %d tokens" % (side, side, (side // 8) ** 2 + 1)


FAMILIES = {f.name: f for f in [
    # ImageNet's 224x224, the size these networks are made for.
    Family("resnet18", build_resnet18, images, [224], False, _image),
    Family("mobilenet_v2", build_mobilenet_v2, images, [224], False, _image),
    Family("bert", build_bert, token_inputs(BERT_VOCAB), [16, 40], True, lambda s: "seq %d" % s),
    Family("gpt2", build_gpt2, token_inputs(GPT2_VOCAB, left_padded=True), [16, 40], True,
           lambda s: "seq %d" % s),
    Family("vit", build_vit, images, [32, 48], True, _vit_text),
]}


def _factory(name):
    family = FAMILIES[name]

    def make():
        size = family.sizes[0]
        return family.build(size), family.inputs(1, size, SEED)
    make.__name__ = name
    make.__doc__ = "(%s, its inputs at batch 1 and %s)" % (name, family.describe(family.sizes[0]))
    return make


resnet18 = _factory("resnet18")
mobilenet_v2 = _factory("mobilenet_v2")
bert = _factory("bert")
gpt2 = _factory("gpt2")
vit = _factory("vit")
