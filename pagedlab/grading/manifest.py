"""sha256 of each source of pagedlab.grading, checked before grading (pagedlab.grading.integrity).

Written by `python -m pagedlab.grading.integrity --write`; do not edit by hand."""

SHA256 = {
    '__init__.py': '5b18578c61cede5fc34e8eddb43b1c5c755059ed7e812998920f8baaff168121',
    '__main__.py': '9d1524e386bd7a47d61711d50ee45d8fa27b6b08d07b8e5cb496224c371d9401',
    'align.py': '2eb37c41d20d13bcf1b9545ee1591b1de719fbd9c22124d7c8e75bd39c930fb3',
    'calls.py': '602de12f93b2fe0054ff9b3ec1a040e51e9f578e659bd3b78a5fbfd8a6e4d542',
    'checked.py': '1b2806565b144791c052fd12d38ac37753a04fb07ba14c4e5262fed7f6fab280',
    'cli.py': 'f01417e01e4e805e79a9315371113a5348d402dfd88b9e5c1352106056bb81c1',
    'collect.py': '7d3edcac2f0f65ccc0272ad2785dee73bdadd28871c10a4c1d48ff93a95abfac',
    'grade.py': '09b40f243d340d3e27aa7ef2f0db2536fb473fdf85044d9a9051a6e7138dafeb',
    'harness.py': 'ac7b9b6211e8d7dd4a88c420a70643b81e053dbda6c32612018ab905ad137f9b',
    'integrity.py': 'c04f1c73bac92ee039c8b66db33c9a662f7ca8e93351492d0c9e5a8b53c9eeb6',
    'judge.py': 'e4a6168028df580f04d6c222f2bed852662f591fecd24e5324c756f5588b05b4',
    'machine.py': '8eaceb1ca21eda0d70f8a4b5e7aeb3db650758d4c3d2e02cf1bd989a00d3a5ac',
    'procs.py': 'e41eb43abd63396da7db7f866a3c75e4f3bb59f0616fd2139e52fcaf910bcd64',
    'pytest_plugin.py': 'be5cb5419ea188be957af9ff669ce2adfdb749edde257f73fa66dce6a0c1be79',
    'review.py': 'd88057313e7b8360ad0e44dfb9d5151ef768430f4c8fe3c0ae35076ab112ba61',
    'run.py': '80eb6332b59ce9f8dfed3f8c212291e090492ca209b979a4cdc2b5e7b8c79420',
    'sandbox.py': '975d7e635a7b39bac9023495d8836af771fbd7520bade3e5a3e530be35edfd8c',
    'shards.py': '96ca37a588e54b084f4f8de5d09244da7c940ecad2a8c42956051c02d4094516',
    'similarity.py': '63aeaeb825de6bfbed2dae6d12d429d1ac4a941b737f80c4c3e3108ecdae7b75',
    'specs.py': '67b7683592a83defd0910f8393d99dd91974a7cb3c173acc096fdfb7dac734f4',
    'supervise.py': '3f45730b8c39b09fe28331167a282026c2ddd4bf6b7743b69ab8ffb36b58c9c5',
    'tables.py': '78efeedffb1993bbc0d200ba438f540dae7be2626e05368b71aae9531da5df3c',
}
