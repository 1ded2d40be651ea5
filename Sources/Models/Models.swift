import Tensor

/// The models module: what an app links to classify — weights files (`ModelFile`), and, as their issues land,
/// preprocessing, the shape and motion classifiers and their non-ML fallbacks. Built on `Tensor`; it carries no
/// training code.
public enum Models {}
