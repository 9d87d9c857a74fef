module github.com/youndie/booblik/clients/go

go 1.23
