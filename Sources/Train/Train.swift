/// The training module: backward passes for every engine layer, losses, optimizers, CSV datasets, the training
/// loop and export to weights files. Apps that only classify never link it.
public enum Training {}
