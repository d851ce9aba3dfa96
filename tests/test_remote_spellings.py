"""A remote is found by the repository it points to, whatever its spelling; git's
traffic is still bound to the canonical https URL. Real git repositories."""

from __future__ import annotations

import pytest

from evaluator.canonical import text_digest
from observe.git.config import github_repository_of
from observe.git.observer import GitObservationError, GitObserver
from tests.test_observe_git import URL, gh, plain_git, repo  # noqa: F401  (fixtures)

SAME_REPOSITORY = [
    "https://github.com/octo/demo.git",
    "https://github.com/octo/demo",
    "https://github.com/Octo/Demo.git",
    "git@github.com:octo/demo.git",
    "git@github.com:octo/demo",
    "ssh://git@github.com/octo/demo.git",
    "ssh://git@github.com/octo/demo",
]
NOT_GITHUB_COM = [
    "https://github.example.com/octo/demo.git",  # a GitHub Enterprise Server host
    "git@github.example.com:octo/demo.git",
    "https://user@github.com/octo/demo.git",
    "https://github.com:443/octo/demo.git",
    "ssh://git@github.com:22/octo/demo.git",
    "https://github.com/octo/demo/",
    "https://github.com/octo/demo.git?x=1",
    "git://github.com/octo/demo.git",
    "http://github.com/octo/demo.git",
]


@pytest.mark.parametrize("url", SAME_REPOSITORY)
def test_every_spelling_names_the_same_repository(url):
    assert github_repository_of(url) == "octo/demo"


@pytest.mark.parametrize("url", NOT_GITHUB_COM)
def test_other_hosts_and_decorated_urls_name_nothing(url):
    assert github_repository_of(url) is None


@pytest.mark.parametrize("url", SAME_REPOSITORY)
def test_the_remote_is_found_by_what_it_points_to_and_traffic_stays_https(repo, gh, url):  # noqa: F811
    plain_git(repo, "remote", "set-url", "origin", url)
    with GitObserver(str(repo), gh_path=str(gh[0])) as observer:
        assert observer.remote_name_for("octo/demo") == "origin"
        git = observer.git_object("octo/demo")
    assert git["transport_url_sha256"] == text_digest(URL)
    assert git["credential_strategy"] == "gh-cli-https"


def test_an_ssh_fetch_url_and_an_https_push_url_of_one_repository_are_one_remote(repo, gh):  # noqa: F811
    plain_git(repo, "remote", "set-url", "origin", "git@github.com:octo/demo.git")
    plain_git(repo, "remote", "set-url", "--add", "--push", "origin", "https://github.com/octo/demo")
    with GitObserver(str(repo), gh_path=str(gh[0])) as observer:
        assert observer.remote_name_for("octo/demo") == "origin"


def test_two_spellings_on_two_remotes_are_ambiguous(repo, gh):  # noqa: F811
    plain_git(repo, "remote", "add", "mirror", "ssh://git@github.com/octo/demo")
    with GitObserver(str(repo), gh_path=str(gh[0])) as observer:
        with pytest.raises(GitObservationError) as error:
            observer.remote_name_for("octo/demo")
    assert error.value.code == "git-remote-ambiguous"


def test_a_github_enterprise_server_remote_is_refused_with_a_clear_message(repo, gh):  # noqa: F811
    plain_git(repo, "remote", "set-url", "origin", "https://github.example.com/octo/demo.git")
    with GitObserver(str(repo), gh_path=str(gh[0])) as observer:
        with pytest.raises(GitObservationError) as error:
            observer.remote_name_for("octo/demo")
    assert error.value.code == "git-remote-not-found"
    assert "GitHub Enterprise Server hosts are not supported" in str(error.value)
