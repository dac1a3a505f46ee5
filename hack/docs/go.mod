module github.com/quintet-operators/quintet/hack/docs

go 1.26.0
