import Tensor

/// The models module: what an app links to classify (weights files, preprocessing, the shape and motion
/// classifiers and their non-ML fallbacks), built on `Tensor` and carrying no training code.
///
/// It is being built issue by issue and holds no model yet: the weights-file reader and the classifiers
/// arrive with the issues that build them.
public enum Models {}
