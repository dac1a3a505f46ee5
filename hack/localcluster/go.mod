module github.com/quintet-operators/quintet/hack/localcluster

go 1.26.0
