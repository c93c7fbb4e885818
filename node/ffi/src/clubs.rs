//! Clubs from a phone app: the clubs this node knows, founding one, adding
//! or removing a friend, leaving. Posting to a club is
//! [`PorfiryNode::post_note`] with the audience `club:NAME@FOUNDER` (or
//! `club:NAME` when the short name is unambiguous).

use porfiry_protocol::club::ClubAction;

use crate::error::PorfiryError;
use crate::node::PorfiryNode;
use crate::views::Club;

#[uniffi::export(async_runtime = "tokio")]
impl PorfiryNode {
    /// Every club this node knows (founded here or heard of from friends).
    pub async fn clubs(&self) -> Result<Vec<Club>, PorfiryError> {
        self.on_node(
            |node| async move { Ok(node.clubs().await?.into_iter().map(Club::from).collect()) },
        )
        .await
    }

    /// Founds the club `name`, this node its founder; returns
    /// `NAME@FOUNDER`.
    pub async fn create_club(&self, name: String) -> Result<String, PorfiryError> {
        self.on_node(move |node| async move { Ok(node.create_club(&name).await?) })
            .await
    }

    /// Adds the friend `friend` (peer id or name) to `club`, as an admin
    /// when `admin`; returns the signed change's item id.
    pub async fn add_to_club(
        &self,
        club: String,
        friend: String,
        admin: bool,
    ) -> Result<String, PorfiryError> {
        let action = if admin {
            ClubAction::AddAdmin
        } else {
            ClubAction::Add
        };
        self.on_node(move |node| async move { Ok(node.change_club(&club, action, &friend).await?) })
            .await
    }

    /// Removes the member `friend` (peer id or name) from `club`.
    pub async fn remove_from_club(
        &self,
        club: String,
        friend: String,
    ) -> Result<String, PorfiryError> {
        self.on_node(move |node| async move {
            Ok(node.change_club(&club, ClubAction::Remove, &friend).await?)
        })
        .await
    }

    /// Leaves `club`.
    pub async fn leave_club(&self, club: String) -> Result<String, PorfiryError> {
        self.on_node(move |node| async move {
            Ok(node.change_club(&club, ClubAction::Leave, "").await?)
        })
        .await
    }
}
