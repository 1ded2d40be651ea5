import Models
import Tensor

/// The training module: backward passes, losses, optimizers, CSV datasets and the training loop.
///
/// It is being built issue by issue and holds no training code yet: it arrives with the training-harness issue.
public enum Training {}
